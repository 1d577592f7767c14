// Package docs holds Plume's documentation: one Markdown page per area, linked from the
// README. It has no code; its tests keep the pages honest: every relative link of README.md
// and of these pages resolves (file and #anchor), and every route of the OpenAPI document the
// API serves at /openapi.json is documented on a page, method and path as the document spells
// them.
package docs
