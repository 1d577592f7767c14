// Command lambda is the prompts area's Lambda function (PromptsFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(prompts.Function) }
