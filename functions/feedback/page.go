package feedback

import (
	"net/http"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// pageServer serves the public feedback-link pages (being built).
type pageServer struct{ d Deps }

func newPageServer(d Deps) *pageServer { return &pageServer{d: d} }

func (p *pageServer) show(w http.ResponseWriter, r *http.Request) {
	web.Error(w, r, errs.NotFound("feedback pages are not served yet"))
}

func (p *pageServer) submit(w http.ResponseWriter, r *http.Request) {
	web.Error(w, r, errs.NotFound("feedback pages are not served yet"))
}
