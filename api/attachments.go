package api

import "time"

// AttachmentList answers GET /spans/{span_id}/attachments: the span's attachments whose file
// is in the bucket, each with a presigned GET URL valid until ExpiresAt. An upload whose URL
// was issued but not (successfully) used is not listed.
type AttachmentList struct {
	Attachments []Attachment `json:"attachments"`
	Count       int          `json:"count"`
	ExpiresAt   time.Time    `json:"expires_at"`
}

// Attachment is one file of a span, kept in the bucket. ID is the object's name, which the
// span's attributes or output_data reference ("attachment": id) for attachments extracted at
// ingestion. URL answers with ContentType and a Content-Disposition, both signed: inline for
// images (not SVG), audio, video and PDF, attachment (a download) for any other file;
// ContentType is application/octet-stream for a type a browser would run (HTML, SVG, XML,
// JavaScript).
type Attachment struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	URL         string `json:"url"`
	Label       string `json:"label"`
	ContentType string `json:"content_type"`
	// Size is the stored object's size in bytes, as S3 reports it.
	Size int64 `json:"size"`
}

// AttachmentUploadRequest is the body of POST /spans/{span_id}/attachments. ContentType and
// Size are required; the upload must then be sent with the Content-Type of the answer's
// Headers and a Content-Length of exactly Size bytes (both are signed).
type AttachmentUploadRequest struct {
	Type        string `json:"type"`
	Label       string `json:"label"`
	ContentType string `json:"content_type"`
	// Size is the file's length in bytes, from 1 to PLUME_ATTACHMENT_MAX_BYTES. A pointer: a
	// missing size is told apart from 0.
	Size *int64 `json:"size"`
}

// AttachmentUpload answers POST /spans/{span_id}/attachments: where and how to upload the file
// (a presigned PUT valid until ExpiresAt) and the attachment's key and id.
type AttachmentUpload struct {
	UploadURL string `json:"upload_url"`
	Method    string `json:"method"`
	// Headers are every header the upload must send, with these exact values: Content-Type
	// and Content-Length, which the URL's signature covers. Content-Type is the declared type,
	// or application/octet-stream for a type a browser would run (HTML, SVG, XML, JavaScript).
	Headers   map[string]string `json:"headers"`
	Key       string            `json:"key"`
	ID        string            `json:"id"`
	ExpiresAt time.Time         `json:"expires_at"`
}
