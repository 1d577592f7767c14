// Command lambda is the judges area's Lambda function (JudgesFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(judges.Function) }
