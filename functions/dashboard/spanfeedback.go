package dashboard

import "net/http"

// spanFeedbackRoutes registers the feedback form of a span (thumbs and reason).
func (s *server) spanFeedbackRoutes(mux *http.ServeMux) {}
