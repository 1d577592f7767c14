package trace_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/trace"
)

// TestServedAs: what the URL of an attachment recorded with a media type makes the bucket
// answer. Nothing a browser runs is ever served as itself, nor shown in place.
func TestServedAs(t *testing.T) {
	tests := []struct {
		contentType, filename string
		served, disposition   string
	}{
		{"text/html", "page.html", "application/octet-stream", "attachment; filename=page.html"},
		{"TEXT/HTML; charset=UTF-8", "", "application/octet-stream", "attachment"},
		{"application/xhtml+xml", "", "application/octet-stream", "attachment"},
		{"image/svg+xml", "", "application/octet-stream", "attachment"},
		{"text/xml", "", "application/octet-stream", "attachment"},
		{"application/xml", "", "application/octet-stream", "attachment"},
		{"application/rss+xml", "", "application/octet-stream", "attachment"},
		{"text/xsl", "", "application/octet-stream", "attachment"},
		{"application/javascript", "", "application/octet-stream", "attachment"},
		{"text/javascript", "", "application/octet-stream", "attachment"},
		{"application/x-shockwave-flash", "", "application/octet-stream", "attachment"},
		{"multipart/x-mixed-replace; boundary=x", "", "application/octet-stream", "attachment"},
		{"message/rfc822", "", "application/octet-stream", "attachment"},
		{"not a type", "", "application/octet-stream", "attachment"},
		{"", "", "application/octet-stream", "attachment"},
		{"text/plain; charset=utf-8", "notes.txt", "text/plain; charset=utf-8", "attachment; filename=notes.txt"},
		{"application/json", "", "application/json", "attachment"},
		{"text/csv", "", "text/csv", "attachment"},
		{"image/bmp", "", "image/bmp", "attachment"},
		{"video/quicktime", "", "video/quicktime", "attachment"},
		{"image/png", "chart.png", "image/png", "inline; filename=chart.png"},
		{"image/jpeg", "", "image/jpeg", "inline"},
		{"image/gif", "", "image/gif", "inline"},
		{"image/webp", "", "image/webp", "inline"},
		{"audio/mpeg", "", "audio/mpeg", "inline"},
		{"video/mp4", "", "video/mp4", "inline"},
		{"application/pdf", "a b.pdf", "application/pdf", `inline; filename="a b.pdf"`},
		{"text/plain", "x\"\r\ny", "text/plain", `attachment; filename*=utf-8''x%22%0D%0Ay`},
	}
	for _, tt := range tests {
		t.Run(tt.contentType+" "+tt.filename, func(t *testing.T) {
			served, disposition := trace.ServedAs(tt.contentType, tt.filename)
			assert.Equal(t, tt.served, served)
			assert.Equal(t, tt.disposition, disposition)
		})
	}
}
