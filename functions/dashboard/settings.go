package dashboard

import "net/http"

// settingsRoutes registers the settings page: /ui/settings (keys, model prices, feedback links, project).
func (s *server) settingsRoutes(mux *http.ServeMux) {}
