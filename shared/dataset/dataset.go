package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Dataset is a named, versioned dataset of a project.
type Dataset struct {
	ID, ProjectID, Name string
	Description         *string
	// Latest is the number of the latest version (0: none yet), RowCount its rows.
	Latest, RowCount     int
	CreatedAt, UpdatedAt time.Time
}

// Version is an immutable version of a dataset: its rows are the object Object.
type Version struct {
	ID, ProjectID, DatasetID, DatasetName string
	Number, RowCount                      int
	// Bytes is the object's size and Marks its index.
	Bytes  int64
	Object string
	Marks  []Mark
	// Directory finds a row's entry in the version's row index (LookupRow); empty for a
	// version stored before row indexes.
	Directory RowDirectory
	CreatedAt time.Time
}

// Store keeps datasets and their versions.
type Store interface {
	// CreateDataset stores a new dataset. Errors: Conflict when the name is taken.
	CreateDataset(ctx context.Context, d Dataset) error
	// Dataset reads a dataset by name. Errors: NotFound.
	Dataset(ctx context.Context, projectID, name string) (Dataset, error)
	// Datasets lists datasets by name from cursor, at most limit, and the next cursor.
	Datasets(ctx context.Context, projectID, cursor string, limit int) ([]Dataset, string, error)
	// AddVersion stores v as the dataset's version v.Number, and makes it the latest, at once;
	// only when v.Number is the latest number plus one. Errors: Conflict when another version
	// took the number, NotFound when the dataset is gone.
	AddVersion(ctx context.Context, v Version) error
	// Version reads version n of a dataset (0: the latest). Errors: NotFound.
	Version(ctx context.Context, projectID, name string, n int) (Version, error)
	// VersionByID reads a version by its id. Errors: NotFound.
	VersionByID(ctx context.Context, projectID, id string) (Version, error)
	// Versions lists a dataset's versions newest first from cursor, at most limit.
	Versions(ctx context.Context, projectID, name, cursor string, limit int) ([]Version, string, error)
}

// Objects are the bucket's objects, as the service uses them.
type Objects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, error)
	Delete(ctx context.Context, keys ...string) error
}

// Service is the datasets' domain logic over a Store and the bucket.
type Service struct {
	store   Store
	objects Objects
	now     func() time.Time
}

// NewService returns the service; now is its clock (nil: time.Now).
func NewService(store Store, objects Objects, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, objects: objects, now: now}
}

// namePattern is what a dataset name may be: it is a path segment and part of a key. IsName
// bounds its length to 128 (a bounded repeat in the pattern would compile to 127 copies of its
// class, a fraction of a millisecond of every cold start).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._ -]*$`)

// IsName reports whether s can name a dataset.
func IsName(s string) bool { return len(s) <= 128 && namePattern.MatchString(s) }

// uploadTTL is how long an upload URL is valid.
const uploadTTL = time.Hour

// Create creates a dataset. Errors: Invalid for a bad name, Conflict when it exists.
func (s *Service) Create(ctx context.Context, projectID, name string, description *string) (Dataset, error) {
	if !IsName(name) {
		return Dataset{}, errs.Invalid("dataset name %q must be 1 to 128 letters, digits, spaces, '.', '_' or '-'", name)
	}
	now := s.now().UTC()
	d := Dataset{ID: uuid.NewString(), ProjectID: projectID, Name: name, Description: description, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateDataset(ctx, d); err != nil {
		return Dataset{}, err
	}
	return d, nil
}

// Get reads a dataset. Errors: NotFound.
func (s *Service) Get(ctx context.Context, projectID, name string) (Dataset, error) {
	return s.store.Dataset(ctx, projectID, name)
}

// Push makes rows the dataset's next version: a full snapshot, immutable. Errors: NotFound
// for an unknown dataset, Invalid for a bad row (nothing is stored).
func (s *Service) Push(ctx context.Context, projectID, name string, rows []json.RawMessage) (Version, error) {
	d, err := s.store.Dataset(ctx, projectID, name)
	if err != nil {
		return Version{}, err
	}
	b := NewBuilder()
	for _, r := range rows {
		if err := b.Add(r); err != nil {
			return Version{}, err
		}
	}
	return s.store1(ctx, d, uuid.NewString(), b)
}

// StartUpload returns an upload id and a URL to PUT size bytes of NDJSON rows to.
func (s *Service) StartUpload(ctx context.Context, projectID, name string, size int64) (id, url string, expires time.Time, err error) {
	if size < 1 || size > api.MaxDatasetUploadBytes {
		return "", "", time.Time{}, errs.Invalid("bytes must be from 1 to %d", api.MaxDatasetUploadBytes)
	}
	d, err := s.store.Dataset(ctx, projectID, name)
	if err != nil {
		return "", "", time.Time{}, err
	}
	id = uuid.NewString()
	url, err = s.objects.PresignPut(ctx, uploadKey(d, id), "", size, uploadTTL)
	if err != nil {
		return "", "", time.Time{}, err
	}
	return id, url, s.now().UTC().Add(uploadTTL), nil
}

// CommitUpload makes the uploaded object of upload id the dataset's next version, reading it
// as a stream, once. A commit of an upload already committed answers its version. Errors:
// NotFound when nothing was uploaded, Invalid for a bad row (nothing is stored).
func (s *Service) CommitUpload(ctx context.Context, projectID, name, id string) (Version, error) {
	d, err := s.store.Dataset(ctx, projectID, name)
	if err != nil {
		return Version{}, err
	}
	if v, err := s.store.VersionByID(ctx, projectID, id); err == nil && v.DatasetID == d.ID {
		return v, nil
	} else if err != nil && !errs.Is(err, errs.CodeNotFound) {
		return Version{}, err
	}
	key := uploadKey(d, id)
	body, err := s.objects.Open(ctx, key)
	if errs.Is(err, errs.CodeNotFound) {
		return Version{}, errs.NotFound("upload %s of dataset %q not found", id, name)
	}
	if err != nil {
		return Version{}, err
	}
	b := NewBuilder()
	err = b.AddLines(body)
	body.Close()
	if err != nil {
		return Version{}, err
	}
	v, err := s.store1(ctx, d, id, b)
	if err != nil {
		return Version{}, err
	}
	if err := s.objects.Delete(ctx, key); err != nil {
		return Version{}, err
	}
	return v, nil
}

// store1 writes b as the object of a new version of d with id, then the version, numbered one
// past the latest; a concurrent push that took the number makes it read the latest again.
func (s *Service) store1(ctx context.Context, d Dataset, id string, b *Builder) (Version, error) {
	if b.Rows() == 0 {
		return Version{}, errs.Invalid("a dataset version needs at least one row")
	}
	index, dir := b.RowIndex()
	v := Version{
		ID: id, ProjectID: d.ProjectID, DatasetID: d.ID, DatasetName: d.Name, RowCount: b.Rows(),
		Bytes: int64(len(b.Bytes())), Object: versionKey(d, id), Marks: b.Marks(), Directory: dir, CreatedAt: s.now().UTC(),
	}
	if err := s.objects.Put(ctx, v.Object, b.Bytes(), "application/x-ndjson"); err != nil {
		return Version{}, err
	}
	if err := s.objects.Put(ctx, RowIndexKey(v.Object), index, "application/octet-stream"); err != nil {
		return Version{}, err
	}
	for attempt := 0; ; attempt++ {
		v.Number = d.Latest + 1
		err := s.store.AddVersion(ctx, v)
		if err == nil || !errs.Is(err, errs.CodeConflict) || attempt == 4 {
			return v, err
		}
		if d, err = s.store.Dataset(ctx, d.ProjectID, d.Name); err != nil {
			return Version{}, err
		}
	}
}

// Rows reads a page of version n's rows (0: the latest) from offset, at most limit rows and
// at most api.MaxAnswerBytes of them (never none while rows remain): one read of the version
// and one ranged GET of its object. Errors: NotFound for an unknown dataset or version.
func (s *Service) Rows(ctx context.Context, projectID, name string, n, offset, limit int) (api.DatasetRows, error) {
	v, err := s.store.Version(ctx, projectID, name, n)
	if err != nil {
		return api.DatasetRows{}, err
	}
	out := api.DatasetRows{Rows: []api.DatasetRow{}, TotalRows: v.RowCount, Offset: offset, Version: api.VersionRef{ID: v.ID, VersionNumber: v.Number}}
	if out.Rows, err = s.Page(ctx, v, offset, limit); err != nil {
		return api.DatasetRows{}, err
	}
	return out, nil
}

// Page reads the rows of version v from offset, at most limit rows and at most
// api.MaxAnswerBytes of them (never none while rows remain): one ranged GET of its object,
// none past its end. Readers that page through a version read it once and call Page for each
// page (an optimization run's examples).
func (s *Service) Page(ctx context.Context, v Version, offset, limit int) ([]api.DatasetRow, error) {
	if offset >= v.RowCount {
		return []api.DatasetRow{}, nil
	}
	// Room for the rows before offset since the last index entry, the page and one row more.
	budget := api.MaxAnswerBytes - 4096
	start, length := pageRange(v, offset, limit, int64(IndexBytes+2*api.MaxDatasetRowBytes+budget))
	chunk, err := s.objects.GetRange(ctx, v.Object, start.Offset, length)
	if err != nil {
		return nil, fmt.Errorf("read rows of %s: %w", v.Object, err)
	}
	return parsePage(chunk, start.Row, offset, limit, budget)
}

// Version reads version n of a dataset (0: the latest). Errors: NotFound for an unknown
// dataset or version.
func (s *Service) Version(ctx context.Context, projectID, name string, n int) (Version, error) {
	return s.store.Version(ctx, projectID, name, n)
}

// Versions lists a dataset's versions, newest first. Errors: NotFound for an unknown dataset.
func (s *Service) Versions(ctx context.Context, projectID, name, cursor string, limit int) ([]Version, string, error) {
	if _, err := s.store.Dataset(ctx, projectID, name); err != nil {
		return nil, "", err
	}
	return s.store.Versions(ctx, projectID, name, cursor, limit)
}

// List lists the project's datasets by name.
func (s *Service) List(ctx context.Context, projectID, cursor string, limit int) ([]Dataset, string, error) {
	return s.store.Datasets(ctx, projectID, cursor, limit)
}

// VersionByID reads a version by id. Errors: NotFound.
func (s *Service) VersionByID(ctx context.Context, projectID, id string) (Version, error) {
	return s.store.VersionByID(ctx, projectID, id)
}

// ObjectPrefix is where a project's dataset objects are.
func ObjectPrefix(projectID string) string { return "datasets/project=" + projectID + "/" }

func versionKey(d Dataset, id string) string {
	return ObjectPrefix(d.ProjectID) + d.ID + "/" + id + ".ndjson"
}

func uploadKey(d Dataset, id string) string {
	return ObjectPrefix(d.ProjectID) + d.ID + "/uploads/" + id + ".ndjson"
}
