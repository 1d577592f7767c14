package judges

import (
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/web"
)

// maxBackfillBody caps the body of POST .../backfill: {"count": n}.
const maxBackfillBody = 1 << 10

// backfill serves POST /projects/{project_id}/judges/{judge_id}/backfill: the judge's verdicts
// on its count most recent spans, queued for the judge runner (judge.Service.Backfill). An
// empty body takes the judge's own backfill count.
func (s *server) backfill(w http.ResponseWriter, r *http.Request) {
	var in api.BackfillRequest
	if r.ContentLength != 0 {
		if err := web.Decode(w, r, &in, maxBackfillBody); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	j, ok := s.judgeOfPath(w, r)
	if !ok {
		return
	}
	count := j.Backfill
	if in.Count != nil {
		count = *in.Count
	}
	p, _ := auth.FromContext(r.Context())
	req, err := s.svc.Backfill(r.Context(), auth.ProjectID(r), j.ID, p.User.ID, count)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.Backfill{JudgeID: req.JudgeID, Count: req.Count, Status: api.BackfillQueued, RequestedAt: req.RequestedAt})
}

// versions serves GET /projects/{project_id}/judges/{judge_id}/versions: the judge's templates,
// newest first, as many as fit one answer from ?offset= (web.List).
func (s *server) versions(w http.ResponseWriter, r *http.Request) {
	vs, err := s.store.TemplateVersions(r.Context(), auth.ProjectID(r), r.PathValue("judge_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]api.JudgeTemplateVersion, len(vs))
	for i, v := range vs {
		out[i] = api.JudgeTemplateVersion{Version: v.Version, Template: v.Template, Source: v.Source,
			RunID: nonEmpty(v.RunID), CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy}
	}
	judgeID := r.PathValue("judge_id")
	web.List(w, r, out, func(vs []api.JudgeTemplateVersion) any {
		return api.JudgeTemplateVersions{JudgeID: judgeID, Versions: vs}
	})
}
