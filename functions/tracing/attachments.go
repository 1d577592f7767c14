package tracing

import (
	"cmp"
	"context"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// DefaultAttachmentURLTTL is how long a presigned attachment URL lasts unless configured.
const DefaultAttachmentURLTTL = 15 * time.Minute

// Bucket is what the attachment routes need of the bucket; *blob.Store is one. Presigning
// sends nothing, but the URLs carry the signer's permissions: a GET URL needs s3:GetObject,
// a PUT URL s3:PutObject, on the object. Sizes needs s3:ListBucket on the span's prefix.
type Bucket interface {
	// PresignGetAs signs a GET whose answer has the Content-Type and Content-Disposition of r
	// (blob.Store.PresignGetAs).
	PresignGetAs(ctx context.Context, key string, ttl time.Duration, r blob.Response) (string, error)
	// PresignPut signs a PUT of exactly size bytes with contentType (blob.Store.PresignPut).
	PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, error)
	// Sizes returns the size of every object under prefix, by key.
	Sizes(ctx context.Context, prefix string) (map[string]int64, error)
}

// AttachmentURLs configures the attachment routes.
type AttachmentURLs struct {
	Bucket Bucket
	// TTL is how long the URLs last (DefaultAttachmentURLTTL when zero).
	TTL time.Duration
	// MaxBytes is the largest upload (trace.DefaultMaxAttachmentBytes when zero). An upload
	// declares its size, from 1 to MaxBytes, and its URL is signed for exactly that length.
	MaxBytes int64
}

func (a AttachmentURLs) ttl() time.Duration { return cmp.Or(a.TTL, DefaultAttachmentURLTTL) }

// maxContentTypeLen bounds the content type of an upload.
const maxContentTypeLen = 255

// attachmentServer serves the attachment routes of both halves: svc is set on the ingest side,
// q on the query side.
type attachmentServer struct {
	svc  *trace.Service
	q    *trace.Queries
	urls AttachmentURLs
}

// getAttachments serves GET /spans/{span_id}/attachments: the span's attachments, each with a
// presigned GET URL that lasts the configured TTL. A span of another project is 404.
//
// Each URL makes S3 answer with the type and disposition of trace.ServedAs, whatever the
// object's metadata: a file a browser would run is a download of application/octet-stream,
// and only images, audio, video and PDF are shown in place. The listed content_type is the
// one served.
//
// Only attachments whose object is in the bucket are listed, each with the object's size as
// S3 stored it, not the size the span records (for an upload, the size its client declared).
// So an upload whose URL was issued but never used, or whose PUT was refused, is not listed
// (the span's record keeps it): a listed attachment always has bytes behind its URL. The
// sizes come from one ListObjectsV2 of the span's prefix (one request per 1,000 objects),
// not a HeadObject per attachment; a span without attachments sends no S3 request.
func (s *attachmentServer) getAttachments(w http.ResponseWriter, r *http.Request) {
	spanID, err := spanIDParam(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	ctx, pid := r.Context(), auth.ProjectID(r)
	atts, err := s.q.Attachments(ctx, pid, spanID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	ttl := s.urls.ttl()
	out := api.AttachmentList{Attachments: make([]api.Attachment, 0, len(atts)), ExpiresAt: time.Now().UTC().Add(ttl).Truncate(time.Second)}
	prefix := trace.AttachmentPrefix(pid, spanID)
	var sizes map[string]int64
	if len(atts) > 0 {
		if sizes, err = s.urls.Bucket.Sizes(ctx, prefix); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	for _, a := range atts {
		if !strings.HasPrefix(a.Key, prefix) {
			continue // only Plume writes keys; a key outside the span's prefix is never signed
		}
		size, stored := sizes[a.Key]
		if !stored {
			continue // not uploaded (yet)
		}
		id := path.Base(a.Key)
		ct, disposition := trace.ServedAs(a.ContentType, fileName(a.Label, id, a.ContentType))
		u, err := s.urls.Bucket.PresignGetAs(ctx, a.Key, ttl, blob.Response{ContentType: ct, ContentDisposition: disposition})
		if err != nil {
			web.Error(w, r, err)
			return
		}
		out.Attachments = append(out.Attachments, api.Attachment{
			ID: id, Type: a.Type, URL: u, Label: a.Label, ContentType: ct, Size: size,
		})
	}
	out.Count = len(out.Attachments)
	web.OK(w, out)
}

// postAttachment serves POST /spans/{span_id}/attachments: body {type?, label?, content_type,
// size}; the answer is a presigned PUT URL for a new object of the span, which the client
// uploads to with exactly the Content-Type and the Content-Length of the answer's headers:
// both are signed, so S3 refuses any other upload (403 SignatureDoesNotMatch) and the size
// bound (AttachmentURLs.MaxBytes) holds for what is stored, not only for what is declared.
// The Content-Type is the declared one, except that a type a browser would run (HTML, SVG,
// XML, JavaScript: trace.StoredMediaType) is application/octet-stream.
//
// The attachment is recorded on the span at once (a span update, Service.Attach); GET lists
// it once the upload is done. A span of another project is 404.
func (s *attachmentServer) postAttachment(w http.ResponseWriter, r *http.Request) {
	spanID, err := spanIDParam(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var in api.AttachmentUploadRequest
	if err := web.Decode(w, r, &in, 64<<10); err != nil {
		web.Error(w, r, err)
		return
	}
	att, err := s.urls.upload(in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	ctx, pid := r.Context(), auth.ProjectID(r)
	att.Key = trace.UploadKey(pid, spanID, att.ContentType)
	ttl := s.urls.ttl()
	// Signed first (locally, no request): nothing is recorded for a URL that cannot be issued.
	u, err := s.urls.Bucket.PresignPut(ctx, att.Key, att.ContentType, att.Size, ttl)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.svc.Attach(ctx, pid, spanID, att); err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.AttachmentUpload{
		UploadURL: u, Method: http.MethodPut,
		Headers: map[string]string{"Content-Type": att.ContentType, "Content-Length": strconv.FormatInt(att.Size, 10)},
		Key:     att.Key, ID: path.Base(att.Key), ExpiresAt: time.Now().UTC().Add(ttl).Truncate(time.Second),
	})
}

// upload validates an upload request into the attachment to record (without its key).
func (a AttachmentURLs) upload(in api.AttachmentUploadRequest) (trace.Attachment, error) {
	ct := strings.TrimSpace(in.ContentType)
	if ct == "" {
		return trace.Attachment{}, errs.Invalid("content_type is required, such as \"image/png\"")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") || len(ct) > maxContentTypeLen {
		return trace.Attachment{}, errs.Invalid("content_type %q is not a media type", textcut.Quote(ct, 64))
	}
	if mime.FormatMediaType(mt, params) == "" {
		return trace.Attachment{}, errs.Invalid("content_type %q is not a media type", textcut.Quote(in.ContentType, 64))
	}
	// Stored, not refused: why is at trace.StoredMediaType.
	ct = trace.StoredMediaType(ct)
	typ := strings.ToLower(strings.TrimSpace(in.Type))
	if typ == "" {
		typ = "file"
		if major, _, _ := strings.Cut(ct, "/"); major == "image" || major == "audio" || major == "video" {
			typ = major
		}
	}
	if len(typ) > 64 {
		return trace.Attachment{}, errs.Invalid("type is longer than 64 bytes")
	}
	if len(in.Label) > trace.MaxNameLen {
		return trace.Attachment{}, errs.Invalid("label is longer than %d bytes", trace.MaxNameLen)
	}
	limit := cmp.Or(a.MaxBytes, trace.DefaultMaxAttachmentBytes)
	if in.Size == nil {
		return trace.Attachment{}, errs.Invalid("size is required: the file's length in bytes, from 1 to %d; the upload must send exactly that Content-Length", limit)
	}
	if size := *in.Size; size < 1 || size > limit {
		return trace.Attachment{}, errs.Invalid("size must be from 1 to %d bytes, not %d", limit, size)
	}
	return trace.Attachment{Type: typ, Label: in.Label, ContentType: ct, Size: *in.Size}, nil
}

// maxFileNameLen bounds the file name a download is saved under.
const maxFileNameLen = 128

// fileName is the name a download of an attachment is saved under: its label, with the
// extension of its content type when the label has none, else its id (the object's name).
func fileName(label, id, contentType string) string {
	name := textcut.Prefix(strings.TrimSpace(label), maxFileNameLen)
	if name == "" {
		return id
	}
	if !strings.Contains(name, ".") {
		name += "." + trace.Extension(trace.StoredMediaType(contentType))
	}
	return name
}

// spanIDParam reads the span id of the path: a UUID, returned in its canonical form.
func spanIDParam(r *http.Request) (string, error) {
	v := r.PathValue("span_id")
	u, err := uuid.Parse(v)
	if err != nil {
		return "", errs.Invalid("span_id must be a UUID, not %q", textcut.Quote(v, 64))
	}
	return u.String(), nil
}
