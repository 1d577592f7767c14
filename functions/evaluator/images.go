package evaluator

import (
	"context"
	"fmt"
	"mime"
	"strings"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// Bounds of the images shown to a judge: the providers' own limits per image (Bedrock's 3.75 MB
// is the smallest) and a count that keeps a request far below their per-request limits.
const (
	maxImages     = 4
	maxImageBytes = 3_750_000
)

// imageTypes are the image types every provider takes.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// attachImages adds span sp's image attachments (extracted at ingestion into the bucket) to
// the user message of req, when req's model takes images (llm.Vision): at most maxImages, each
// at most maxImageBytes. The user message says how many were left out and why, so that the
// judge does not take a missing image for a missing answer.
func (r *Runner) attachImages(ctx context.Context, projectID string, sp trace.Span, req *llm.Request) error {
	var images []trace.Attachment
	for _, a := range sp.Attachments {
		mt, _, _ := mime.ParseMediaType(a.ContentType)
		// The prefix check keeps a record that names another span's or project's object out.
		if imageTypes[mt] && strings.HasPrefix(a.Key, trace.AttachmentPrefix(projectID, sp.ID)) {
			images = append(images, a)
		}
	}
	if len(images) == 0 {
		return nil
	}
	msg := &req.Messages[0]
	if !llm.Vision(req.Model) {
		msg.Text += fmt.Sprintf("\n\n[The span has %d image attachments; they are not shown: the judge model %s does not take images.]", len(images), req.Model)
		return nil
	}
	for _, a := range images {
		if len(msg.Images) == maxImages {
			break
		}
		if a.Size > maxImageBytes {
			continue
		}
		data, err := r.objects.Get(ctx, a.Key)
		if err != nil {
			return fmt.Errorf("read image attachment %s: %w", a.Key, err)
		}
		if len(data) > maxImageBytes {
			continue
		}
		mt, _, _ := mime.ParseMediaType(a.ContentType)
		msg.Images = append(msg.Images, llm.Image{MediaType: mt, Data: data})
	}
	if shown := len(msg.Images); shown < len(images) {
		msg.Text += fmt.Sprintf("\n\n[The span has %d image attachments; %d are shown (at most %d, each at most %d bytes).]",
			len(images), shown, maxImages, maxImageBytes)
	}
	return nil
}
