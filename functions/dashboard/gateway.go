package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// The gateway page: where applications send model calls through Plume (the OpenAI-compatible
// endpoint and snippets), the rule by which the zeroeval SDKs use it, the deployment's limits
// with what they have counted for the project, and which calls it records. Everything comes
// from GET /projects/{project_id}/gateway, through the API in-process.

// gatewayRoutes registers the gateway page: /ui/gateway.
func (s *server) gatewayRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/gateway", s.gatewayPage)
}

// gatewaySpanTag is the span tag of the llm spans the gateway records (functions/gateway,
// spanTag), whether a call started a trace of its own (whose root its span is, named
// chat.completions) or joined a caller's trace through its traceparent: the spans page, which
// filters spans by their own tags, finds them all.
const gatewaySpanTag = "integration=gateway"

// gatewayExampleModel is the model of the snippets: a provider/model id, the form that always
// routes (functions/gateway).
const gatewayExampleModel = "openai/gpt-4o-mini"

type gatewayData struct {
	// Endpoint is the OpenAI base URL applications use; Streaming is whether it is the
	// deployment's streaming URL (PLUME_GATEWAY_URL), else it is this dashboard's base + /v1.
	Endpoint  string
	Streaming bool
	Model     string
	Meters    []gatewayMeter
	// RequestLimit is the requests-per-minute limit in words ("" when unset): requests are
	// counted, but the API does not answer their count.
	RequestLimit string
	// UsageMinute and UsageDay say which windows the meters count (UTC), when they count any.
	UsageMinute, UsageDay string
	Trace                 string
	// SpansURL is the spans page of the calls the gateway recorded.
	SpansURL string
}

// gatewayMeter is a usage limit with what it has counted.
type gatewayMeter struct {
	ID, Label string
	// Set is whether the limit is set; Limit is then its value in words.
	Set   bool
	Limit string
	// Value and Max are the meter's (Value at most Max); Text says it in words, Percent rounded.
	Value, Max float64
	Text       string
	Percent    int
	Full       bool
}

// gatewayPage serves GET /ui/gateway. Cost: the API's one read of the usage counters (one
// BatchGetItem, none when no usage limit is set).
func (s *server) gatewayPage(w http.ResponseWriter, r *http.Request) {
	c, ctx := s.api(r)
	st, err := c.GatewayStatus(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := gatewayData{Endpoint: s.baseURL(r) + "/v1", Model: gatewayExampleModel, Trace: st.Trace,
		SpansURL: "/ui/spans?" + url.Values{"tag": {gatewaySpanTag}}.Encode()}
	if st.Endpoint != nil {
		d.Endpoint, d.Streaming = *st.Endpoint, true
	}
	if n := st.Limits.RequestsPerMinute; n != nil {
		d.RequestLimit = formatCount(int64(*n)) + " requests a minute"
	}
	tokens := gatewayMeter{ID: "gw-tokens", Label: "Tokens this minute"}
	if n := st.Limits.TokensPerMinute; n != nil {
		tokens.Set, tokens.Limit, tokens.Max = true, formatCount(int64(*n))+" tokens a minute", float64(*n)
		var used int64
		if st.Usage != nil && st.Usage.Tokens != nil {
			used = *st.Usage.Tokens
		}
		tokens.fill(float64(used), fmt.Sprintf("%s of %s tokens this minute", formatCount(used), formatCount(int64(*n))))
	}
	spend := gatewayMeter{ID: "gw-spend", Label: "Spend today"}
	if usd := st.Limits.DailySpendUSD; usd != nil {
		spend.Set, spend.Limit, spend.Max = true, dollars(*usd)+" a day", *usd
		var used float64
		if st.Usage != nil && st.Usage.SpendUSD != nil {
			used = *st.Usage.SpendUSD
		}
		spend.fill(used, fmt.Sprintf("Spend today %s of %s", dollars(used), dollars(*usd)))
	}
	d.Meters = []gatewayMeter{tokens, spend}
	if u := st.Usage; u != nil {
		d.UsageMinute, d.UsageDay = u.Minute.UTC().Format("15:04"), u.Day
	}
	s.render(w, r, http.StatusOK, "gateway", page{Title: "Gateway", Nav: "gateway", Data: d})
}

// fill sets the meter's count: value of m.Max, said as text.
func (m *gatewayMeter) fill(value float64, text string) {
	m.Value, m.Text = min(value, m.Max), text
	if m.Max > 0 {
		m.Percent = int(min(100*value/m.Max, 100) + 0.5)
	}
	m.Full = value >= m.Max
}

// dollars formats an amount in USD with cents ($1.23), or with more digits below a cent.
func dollars(usd float64) string {
	if usd != 0 && usd < 0.01 {
		return "$" + strconv.FormatFloat(usd, 'f', -1, 64)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// formatCount writes n with thousands separators (12,345).
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + formatCount(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
