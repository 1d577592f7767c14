package datasets

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

type server struct {
	d *dataset.Service
	x *dataset.Experiments
}

// smallBody caps the bodies of every write but a push.
const smallBody = 1 << 20

// create serves POST /v1/datasets: 409 when the name is taken (the SDK then pushes on).
func (s *server) create(w http.ResponseWriter, r *http.Request) {
	var req api.CreateDatasetRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	d, err := s.d.Create(r.Context(), auth.ProjectID(r), req.Name, req.Description)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toDataset(d))
}

// get serves GET /v1/datasets/{dataset}: one GetItem.
func (s *server) get(w http.ResponseWriter, r *http.Request) {
	d, err := s.d.Get(r.Context(), auth.ProjectID(r), r.PathValue("dataset"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toDataset(d))
}

// list serves GET /v1/datasets?limit=&cursor=: one Query, by name.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := page(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	ds, next, err := s.d.List(r.Context(), auth.ProjectID(r), cursor, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.DatasetList{Datasets: make([]api.Dataset, len(ds)), NextCursor: nonEmpty(next)}
	for i, d := range ds {
		out.Datasets[i] = toDataset(d)
	}
	web.OK(w, out)
}

// push serves POST /v1/datasets/{dataset}/data: every row, version N+1. Requests: one GetItem,
// one PutObject, one TransactWriteItems.
func (s *server) push(w http.ResponseWriter, r *http.Request) {
	var req api.PushDatasetRequest
	if err := web.Decode(w, r, &req, api.MaxDatasetPushBytes); err != nil {
		if errs.Is(err, errs.CodeTooLarge) {
			err = errs.Errorf(errs.CodeTooLarge, "rows over %d bytes: push them through an upload (POST /v1/datasets/{name}/uploads; plume datasets push does)", api.MaxDatasetPushBytes)
		}
		web.Error(w, r, err)
		return
	}
	v, err := s.d.Push(r.Context(), auth.ProjectID(r), r.PathValue("dataset"), req.Data)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toVersion(v))
}

// rows serves GET /v1/datasets/{dataset}/data?version_number=&offset=&limit=: one read of the
// version and one ranged GET.
func (s *server) rows(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, err := intParam(q.Get("version_number"), "version_number", 0, 1, 1<<31-1)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	offset, err := intParam(q.Get("offset"), "offset", 0, 0, api.MaxDatasetRows)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	limit, err := intParam(q.Get("limit"), "limit", api.DefaultDatasetRowsLimit, 1, api.MaxDatasetRowsLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out, err := s.d.Rows(r.Context(), auth.ProjectID(r), r.PathValue("dataset"), n, offset, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, out)
}

// versions serves GET /v1/datasets/{dataset}/versions, newest first.
func (s *server) versions(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := page(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	vs, next, err := s.d.Versions(r.Context(), auth.ProjectID(r), r.PathValue("dataset"), cursor, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.DatasetVersionList{Versions: make([]api.DatasetVersion, len(vs)), NextCursor: nonEmpty(next)}
	for i, v := range vs {
		out.Versions[i] = toVersion(v)
	}
	web.OK(w, out)
}

// startUpload serves POST /v1/datasets/{dataset}/uploads: a presigned PUT of the announced
// size.
func (s *server) startUpload(w http.ResponseWriter, r *http.Request) {
	var req api.CreateUploadRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	id, url, expires, err := s.d.StartUpload(r.Context(), auth.ProjectID(r), r.PathValue("dataset"), req.Bytes)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.DatasetUpload{ID: id, URL: url, Method: http.MethodPut, ExpiresAt: expires})
}

// commitUpload serves POST /v1/datasets/{dataset}/uploads/{upload_id}/commit: the uploaded
// object, read as a stream, becomes version N+1.
func (s *server) commitUpload(w http.ResponseWriter, r *http.Request) {
	v, err := s.d.CommitUpload(r.Context(), auth.ProjectID(r), r.PathValue("dataset"), r.PathValue("upload_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toVersion(v))
}

// page reads limit and cursor of a list.
func page(r *http.Request) (int, string, error) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", api.DefaultDatasetListLimit, 1, api.MaxDatasetListLimit)
	if err != nil {
		return 0, "", err
	}
	cursor := q.Get("cursor")
	if len(cursor) > api.MaxCursorBytes {
		return 0, "", errs.Invalid("cursor is longer than %d bytes", api.MaxCursorBytes)
	}
	return limit, cursor, nil
}

// intParam is the integer query parameter s, def when absent; Invalid outside [lo, hi].
func intParam(s, name string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("%s must be an integer from %d to %d, got %q", name, lo, hi, s)
	}
	return n, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toDataset(d dataset.Dataset) api.Dataset {
	return api.Dataset{
		ID: d.ID, Name: d.Name, Description: d.Description, VersionNumber: d.Latest, RowCount: d.RowCount,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

func toVersion(v dataset.Version) api.DatasetVersion {
	return api.DatasetVersion{ID: v.ID, DatasetID: v.DatasetID, VersionNumber: v.Number, RowCount: v.RowCount, Bytes: v.Bytes, CreatedAt: v.CreatedAt}
}

// rawOrNull is v, or JSON null when empty.
func rawOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}
