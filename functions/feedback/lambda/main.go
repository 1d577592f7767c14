// Command lambda is the feedback area's Lambda function (FeedbackFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(feedback.Function) }
