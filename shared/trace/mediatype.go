package trace

import (
	"mime"
	"slices"
	"strings"
)

// This file is what Plume lets a browser do with an attachment. Anyone holding a key of a
// project, an ingest key included, chooses an attachment's bytes and declares its type, and
// the bucket serves the bytes to whoever opens the attachment's URL. Two rules keep a file from
// running as a page there:
//
//   - At upload and at extraction, a type a browser would run (StoredMediaType) is stored and
//     recorded as application/octet-stream.
//   - At read, a presigned URL makes S3 answer with the type and disposition of ServedAs,
//     signed into the URL: inline only for the few types of InlineMediaType, every other file
//     a download (Content-Disposition: attachment) that no browser renders, whatever the
//     object's own metadata says (an object stored before the first rule included).
//
// S3 cannot send X-Content-Type-Options: nosniff through a presigned URL (no override exists
// for it); the second rule makes it unneeded for everything but InlineMediaType's types, which
// browsers do not sniff into documents.

// octetStream is the type of bytes that are only bytes.
const octetStream = "application/octet-stream"

// StoredMediaType is the media type an attachment is stored and recorded with, given the one
// its client declared (or that was sniffed from its bytes): ct in canonical form, or
// application/octet-stream when ct is not a media type or is one a browser runs as a document
// or a script: HTML and XHTML, SVG and any other XML (a browser renders XML documents, and
// XHTML or SVG inside them runs scripts), JavaScript and ECMAScript, XSLT, multipart and
// message types (containers of documents), and Flash.
//
// Such files are kept, not refused: an agent's trace may well carry a page it fetched or an
// SVG chart a model drew, and an attachment extracted at ingestion cannot be refused without
// losing it (the SDKs send it once and read no answer per attachment). Their bytes stay whole;
// only the type that would let a browser run them goes.
func StoredMediaType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") || runnable(mt) {
		return octetStream
	}
	if out := mime.FormatMediaType(mt, params); out != "" {
		return out
	}
	return octetStream
}

// runnable reports whether a browser runs a document of media type mt (lowercase, without
// parameters) as a page or a script.
func runnable(mt string) bool {
	major, sub, _ := strings.Cut(mt, "/")
	switch {
	case strings.Contains(sub, "html"), // text/html, application/xhtml+xml, text/x-html ...
		sub == "xml", strings.HasSuffix(sub, "+xml"), // every XML document, SVG included
		strings.Contains(sub, "xsl"),
		strings.Contains(sub, "javascript"), strings.Contains(sub, "ecmascript"),
		strings.Contains(sub, "jscript"), strings.Contains(sub, "livescript"),
		strings.Contains(sub, "shockwave-flash"),
		major == "multipart", major == "message":
		return true
	}
	return false
}

// inlineMediaTypes are the media types a browser may show in place: images of formats that
// hold no script, audio and video, and PDF (which browsers show in a sandboxed viewer). Not
// SVG: an SVG document runs scripts.
var inlineMediaTypes = []string{
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
	"video/mp4", "video/webm",
	"application/pdf",
}

// InlineMediaType reports whether a browser may show an attachment of media type ct in place
// (an image in a page, a PDF in a tab) rather than only download it: ct is one of
// inlineMediaTypes or an audio type.
func InlineMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return slices.Contains(inlineMediaTypes, mt) || (strings.HasPrefix(mt, "audio/") && !runnable(mt))
}

// ServedAs is how the URL of an attachment recorded with media type ct makes the bucket answer:
// the Content-Type (StoredMediaType of ct) and the Content-Disposition, "inline" for
// InlineMediaType's types and "attachment" (a download) for every other, with filename as the
// file's name when it is not empty.
func ServedAs(ct, filename string) (contentType, disposition string) {
	contentType = StoredMediaType(ct)
	disposition = "attachment"
	if InlineMediaType(contentType) {
		disposition = "inline"
	}
	if filename == "" {
		return contentType, disposition
	}
	// FormatMediaType quotes the name, or encodes it as RFC 2231 (filename*=utf-8''...) when it
	// holds bytes a quoted string cannot: no name can break out of the header.
	if d := mime.FormatMediaType(disposition, map[string]string{"filename": filename}); d != "" {
		return contentType, d
	}
	return contentType, disposition
}
