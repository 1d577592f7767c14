package trace

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// This file is the layout of the objects Plume writes to the bucket for spans: the batches of
// spans (NDJSON, the Athena table) and the attachments. Nothing else builds these keys.

// BatchPrefix is the prefix of the keys of every batch of a project:
// spans/project=<id>/.
func BatchPrefix(projectID string) string { return "spans/project=" + projectID + "/" }

// BatchKey is the S3 key of a batch object: Hive-style partitions by project, date and hour, so
// that Athena (or any engine reading S3) can query every span as a table (see docs/tracing.md):
//
//	spans/project=<id>/date=<yyyy-mm-dd>/hour=<hh>/<batch>.ndjson
func BatchKey(projectID string, at time.Time, batchID string) string {
	at = at.UTC()
	return fmt.Sprintf("%sdate=%s/hour=%02d/%s.ndjson", BatchPrefix(projectID), at.Format(time.DateOnly), at.Hour(), batchID)
}

// extensions name the object of each common media type; others end in ".bin". A fixed table
// (not the system's MIME database) keeps keys the same wherever Plume runs.
var extensions = map[string]string{
	"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
	"image/svg+xml": "svg", "image/bmp": "bmp", "image/tiff": "tiff", "image/avif": "avif",
	"image/heic": "heic", "image/x-icon": "ico",
	"audio/mpeg": "mp3", "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
	"audio/ogg": "ogg", "audio/flac": "flac", "audio/aac": "aac", "audio/mp4": "m4a",
	"audio/webm": "weba", "audio/pcm": "pcm",
	"video/mp4": "mp4", "video/webm": "webm", "video/quicktime": "mov", "video/ogg": "ogv",
	"application/pdf": "pdf", "application/json": "json", "application/zip": "zip",
	"text/plain": "txt", "text/csv": "csv", "text/markdown": "md", "text/html": "html",
}

// Extension is the file extension (without the dot) of the objects of a media type.
func Extension(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	if ext, ok := extensions[strings.ToLower(strings.TrimSpace(mt))]; ok {
		return ext
	}
	return "bin"
}

// AttachmentPrefix is the prefix of the keys of every attachment of a span.
func AttachmentPrefix(projectID, spanID string) string {
	return fmt.Sprintf("attachments/project=%s/span=%s/", projectID, spanID)
}

// AttachmentKey is the key of an extracted attachment: the item's number in its span and the
// first 16 hex digits of the SHA-256 of its bytes, so that extracting again writes the same
// object.
func AttachmentKey(projectID, spanID string, n int, sum []byte, contentType string) string {
	return fmt.Sprintf("%s%d-%s.%s", AttachmentPrefix(projectID, spanID), n, hex.EncodeToString(sum[:8]), Extension(contentType))
}

// UploadKey is a new key for an attachment uploaded directly (POST /spans/{id}/attachments).
func UploadKey(projectID, spanID, contentType string) string {
	return fmt.Sprintf("%supload-%s.%s", AttachmentPrefix(projectID, spanID), uuid.Must(uuid.NewV7()), Extension(contentType))
}

// ParseBatchKey returns the project of a batch object's key (BatchKey); ok is false for a key
// that is not one.
func ParseBatchKey(key string) (projectID string, ok bool) {
	rest, found := strings.CutPrefix(key, "spans/project=")
	if !found || !strings.HasSuffix(rest, ".ndjson") {
		return "", false
	}
	projectID, rest, found = strings.Cut(rest, "/")
	if !found || projectID == "" || !strings.HasPrefix(rest, "date=") {
		return "", false
	}
	return projectID, true
}
