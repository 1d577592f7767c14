package api

import (
	"encoding/json"
	"time"
)

// Event types: what a project's webhooks subscribe to (CreateWebhookRequest.Events) and the
// Type of every Event. Each is raised once per change that took effect, never for one that
// did not (docs/webhooks.md).
const (
	EventPromptVersionCreated    = "prompt.version.created"
	EventPromptTagMoved          = "prompt.tag.moved"
	EventPromptModelBound        = "prompt.model.bound"
	EventJudgeCreated            = "judge.created"
	EventJudgeUpdated            = "judge.updated"
	EventOptimizationRunFinished = "optimization.run.finished"
	EventOptimizationRunDeployed = "optimization.run.deployed"
	EventMonitorAlerted          = "monitor.alerted"
	EventMonitorResolved         = "monitor.resolved"
	EventDatasetVersionCreated   = "dataset.version.created"
)

// EventTypes are every event type, in the order the docs list them.
var EventTypes = []string{
	EventPromptVersionCreated, EventPromptTagMoved, EventPromptModelBound,
	EventJudgeCreated, EventJudgeUpdated,
	EventOptimizationRunFinished, EventOptimizationRunDeployed,
	EventMonitorAlerted, EventMonitorResolved,
	EventDatasetVersionCreated,
}

// Event is one thing that happened in a project, as a webhook receives it (the body of a
// standard-format delivery). ID is the same on every delivery of the event, to every
// webhook: receivers deduplicate by it (it is also the webhook-id header). Data is the body of
// the type: PromptVersionCreated, PromptTagMoved, PromptModelBound, JudgeEvent,
// OptimizationRunEvent, MonitorEvent or DatasetVersionCreated.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Time      time.Time       `json:"time"`
	ProjectID string          `json:"project_id"`
	Data      json.RawMessage `json:"data"`
}

// PromptVersionCreated is the Data of prompt.version.created.
type PromptVersionCreated struct {
	Slug      string `json:"slug"`
	Version   int    `json:"version"`
	VersionID string `json:"version_id"`
	By        string `json:"by"`
}

// DatasetVersionCreated is the Data of dataset.version.created: a push (the SDK's, the CLI's
// or an upload's commit) stored the dataset's next version.
type DatasetVersionCreated struct {
	Dataset   string `json:"dataset"`
	DatasetID string `json:"dataset_id"`
	Version   int    `json:"version"`
	VersionID string `json:"version_id"`
	RowCount  int    `json:"row_count"`
}

// PromptTagMoved is the Data of prompt.tag.moved, a deploy: the tag now points at
// ToVersion; FromVersion is null when the tag did not exist before.
type PromptTagMoved struct {
	Slug        string `json:"slug"`
	Tag         string `json:"tag"`
	FromVersion *int   `json:"from_version"`
	ToVersion   int    `json:"to_version"`
	ToVersionID string `json:"to_version_id"`
	By          string `json:"by"`
}

// PromptModelBound is the Data of prompt.model.bound: ModelID is null when the binding was
// removed.
type PromptModelBound struct {
	Slug      string  `json:"slug"`
	Version   int     `json:"version"`
	VersionID string  `json:"version_id"`
	ModelID   *string `json:"model_id"`
	By        string  `json:"by"`
}

// JudgeEvent is the Data of judge.created and judge.updated.
type JudgeEvent struct {
	JudgeID string `json:"judge_id"`
	Name    string `json:"name"`
	Paused  bool   `json:"paused"`
	By      string `json:"by"`
}

// OptimizationRunEvent is the Data of optimization.run.finished (State is succeeded, failed
// or cancelled; Recommendation is the report's, when it has one) and
// optimization.run.deployed (DeployedVersionID is the prompt version deployed).
type OptimizationRunEvent struct {
	RunID             string `json:"run_id"`
	State             string `json:"state"`
	Recommendation    string `json:"recommendation,omitempty"`
	Error             string `json:"error,omitempty"`
	DeployedVersionID string `json:"deployed_version_id,omitempty"`
}
