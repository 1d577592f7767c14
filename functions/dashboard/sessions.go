package dashboard

import "net/http"

// sessionRoutes registers the sessions pages: GET /ui/sessions and GET /ui/sessions/{session_id}.
func (s *server) sessionRoutes(mux *http.ServeMux) {}
