package gateway

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/web"
)

// modelList is GET /v1/models' answer, in OpenAI's shape.
type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// tableProviders are the price table's providers that llm.Route names otherwise.
var tableProviders = map[string]string{"google": "gemini"}

// listModels serves GET /v1/models: the models of the price table whose provider this
// deployment can call, and the deployment's Bedrock models when it can call Bedrock, as
// "provider/model" ids (any other model id the providers know is served too; this is the list
// a client can pick from).
func (s *server) listModels(w http.ResponseWriter, r *http.Request) {
	out := modelList{Object: "list", Data: []model{}}
	models, err := s.Models(r.Context())
	if err == nil {
		for _, p := range s.Prices.Prices() {
			id := cmp.Or(tableProviders[p.Provider], p.Provider) + "/" + p.ID
			if models.Configured(id) {
				out.Data = append(out.Data, model{ID: id, Object: "model", OwnedBy: p.Provider})
			}
		}
		for _, m := range s.BedrockModels {
			if id := llm.ProviderBedrock + "/" + m; models.Configured(id) {
				out.Data = append(out.Data, model{ID: id, Object: "model", OwnedBy: llm.ProviderBedrock})
			}
		}
	}
	slices.SortFunc(out.Data, func(a, b model) int { return strings.Compare(a.ID, b.ID) })
	web.OK(w, out)
}
