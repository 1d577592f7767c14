package dashboard

import "net/http"

// optimizeRoutes registers the optimization pages: /ui/prompts/{slug}/optimize and /ui/optimization-runs/{run_id}.
func (s *server) optimizeRoutes(mux *http.ServeMux) {}
