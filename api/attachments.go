package api

import "time"

// AttachmentList answers GET /spans/{span_id}/attachments: the span's attachments, each with a
// presigned GET URL valid until ExpiresAt.
type AttachmentList struct {
	Attachments []Attachment `json:"attachments"`
	Count       int          `json:"count"`
	ExpiresAt   time.Time    `json:"expires_at"`
}

// Attachment is one file of a span, kept in the bucket. ID is the object's name, which the
// span's attributes or output_data reference ("attachment": id) for attachments extracted at
// ingestion.
type Attachment struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	URL         string `json:"url"`
	Label       string `json:"label"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// AttachmentUploadRequest is the body of POST /spans/{span_id}/attachments. ContentType is
// required; the upload must then be sent with exactly that Content-Type (it is signed).
type AttachmentUploadRequest struct {
	Type        string `json:"type"`
	Label       string `json:"label"`
	ContentType string `json:"content_type"`
	Size        *int64 `json:"size"`
}

// AttachmentUpload answers POST /spans/{span_id}/attachments: where and how to upload the file
// (a presigned PUT valid until ExpiresAt) and the attachment's key and id.
type AttachmentUpload struct {
	UploadURL string            `json:"upload_url"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	Key       string            `json:"key"`
	ID        string            `json:"id"`
	ExpiresAt time.Time         `json:"expires_at"`
}
