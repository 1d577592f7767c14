package api

import "time"

// ModelPrice is a model's price as GET, PUT and the listing of
// /projects/{project_id}/model-prices answer it. Prices are in USD per 1M tokens. Source is
// "project_price" (the project's own, which wins when spans are priced) or "price_table" (the
// shipped table; TableID names the entry that matched).
type ModelPrice struct {
	Model       string            `json:"model"`
	Source      string            `json:"source"`
	Provider    string            `json:"provider,omitempty"`
	Input       float64           `json:"input"`
	Output      float64           `json:"output"`
	CachedInput float64           `json:"cached_input,omitempty"`
	CacheWrite  float64           `json:"cache_write,omitempty"`
	LongContext *LongContextPrice `json:"long_context,omitempty"`
	TableID     string            `json:"table_id,omitempty"`
	UpdatedAt   *time.Time        `json:"updated_at,omitempty"`
	UpdatedBy   string            `json:"updated_by,omitempty"`
}

// LongContextPrice is the pricing of long requests: above ThresholdTokens input tokens, every
// token of the request is billed at these prices (0 for CachedInput or CacheWrite: Input).
type LongContextPrice struct {
	ThresholdTokens int64   `json:"threshold_tokens"`
	Input           float64 `json:"input"`
	Output          float64 `json:"output"`
	CachedInput     float64 `json:"cached_input,omitempty"`
	CacheWrite      float64 `json:"cache_write,omitempty"`
}

// ModelPriceList answers GET /projects/{project_id}/model-prices: the project's own prices,
// by model, and what the shipped table is.
type ModelPriceList struct {
	Overrides  []ModelPrice   `json:"overrides"`
	PriceTable PriceTableInfo `json:"price_table"`
}

// PriceTableInfo describes the shipped price table: how many models it prices and the date its
// prices were last checked against the providers' pages.
type PriceTableInfo struct {
	Models      int    `json:"models"`
	LastChecked string `json:"last_checked"`
}

// PutModelPriceRequest is the body of PUT /projects/{project_id}/model-prices/{model}: input and
// output are required.
type PutModelPriceRequest struct {
	Provider    string   `json:"provider"`
	Input       *float64 `json:"input"`
	Output      *float64 `json:"output"`
	CachedInput float64  `json:"cached_input"`
	CacheWrite  float64  `json:"cache_write"`
}

// ModelPriceDeleted answers DELETE /projects/{project_id}/model-prices/{model}.
type ModelPriceDeleted struct {
	Model   string `json:"model"`
	Deleted bool   `json:"deleted"`
}
