package dashboard

import "net/http"

// promptWriteRoutes registers the prompt pages' changes: pin a tag, bind a model, the prompt's completions and its feedback links.
func (s *server) promptWriteRoutes(mux *http.ServeMux) {}
