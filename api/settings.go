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
// by model, as many as fit MaxAnswerBytes from ?offset= (NextOffsetHeader says where the rest
// starts), and what the shipped table is.
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

// APIKey is an API key as /projects/{project_id}/api-keys lists it: what it may do and whose it
// is, never its secret nor the secret's hash. Display is the start of the secret
// ("plm_3fA9x0Qb"), enough to recognise a key in a configuration file.
type APIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name,omitempty"`
	Role      string     `json:"role"`
	Display   string     `json:"display"`
	User      User       `json:"user"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// APIKeyList answers GET /projects/{project_id}/api-keys: every key of the project, revoked and
// expired ones included, oldest first, as many as fit MaxAnswerBytes from ?offset=
// (NextOffsetHeader says where the rest starts).
type APIKeyList struct {
	Keys []APIKey `json:"keys"`
}

// CreateAPIKeyRequest is the body of POST /projects/{project_id}/api-keys. Role is "admin",
// "member" or "ingest" (required); Name labels the key; UserEmail and UserName say whose it is;
// ExpiresAt, when set, must be in the future.
type CreateAPIKeyRequest struct {
	Role      string     `json:"role"`
	Name      string     `json:"name,omitempty"`
	UserEmail string     `json:"user_email,omitempty"`
	UserName  string     `json:"user_name,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// CreatedAPIKey answers POST /projects/{project_id}/api-keys: the key and its secret.
// This is the only answer that ever holds the secret: Plume stores only its hash.
type CreatedAPIKey struct {
	APIKey
	Secret string `json:"secret"`
}

// GatewayStatus answers GET /projects/{project_id}/gateway: where applications send the model
// gateway's calls, the deployment's limits of every project's calls and what they have counted
// for this project, and which calls the gateway records as spans.
type GatewayStatus struct {
	// Endpoint is the OpenAI base URL of the gateway that streams (the deployment's
	// PLUME_GATEWAY_URL, ending in /v1); null when the deployment does not say, in which case
	// the API's own base URL + /v1 serves the same routes.
	Endpoint *string       `json:"endpoint"`
	Limits   GatewayLimits `json:"limits"`
	// Usage is null when no usage limit (tokens per minute, daily spend) is set: then nothing
	// counts the project's usage.
	Usage *GatewayUsage `json:"usage"`
	// Trace is the tracing mode (PLUME_GATEWAY_TRACE): "off" records only the calls that ask
	// (a traceparent header or X-Plume-Trace: on), "all" every call but those with
	// X-Plume-Trace: off.
	Trace string `json:"trace"`
}

// GatewayLimits are the deployment's limits of each project's gateway calls; null when unset.
type GatewayLimits struct {
	RequestsPerMinute *int     `json:"requests_per_minute"`
	TokensPerMinute   *int     `json:"tokens_per_minute"`
	DailySpendUSD     *float64 `json:"daily_spend_usd"`
}

// GatewayUsage is what the limits have counted for the project: the tokens of its calls that
// ended in the current UTC minute (null without a tokens-per-minute limit) and the cost of
// those that ended in the current UTC day (null without a daily cap).
type GatewayUsage struct {
	// Minute is the start of the minute Tokens counts.
	Minute time.Time `json:"minute"`
	Tokens *int64    `json:"tokens"`
	// Day is the UTC day SpendUSD counts, as 2006-01-02.
	Day      string   `json:"day"`
	SpendUSD *float64 `json:"spend_usd"`
}
