// Command lambda is the settings area's Lambda function (SettingsFunction in template.yaml).
package main

import (
	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/internal/app"
)

func main() { app.Main(settings.Function) }
