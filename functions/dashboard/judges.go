package dashboard

import "net/http"

// judgeRoutes registers the judges pages: GET /ui/judges, GET /ui/judges/{judge_id} and their forms.
func (s *server) judgeRoutes(mux *http.ServeMux) {}
