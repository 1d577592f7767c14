package dashboard

import (
	"cmp"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
)

// promptWriteRoutes registers the prompt pages' changes: pin a tag, bind a model, the prompt's completions and its feedback links.
func (s *server) promptWriteRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/prompts/{slug}/pin", s.pinConfirm)
	mux.HandleFunc("POST /ui/prompts/{slug}/pin", s.pin)
	mux.HandleFunc("POST /ui/prompts/{slug}/versions/{version}/model", s.bindModel)
	mux.HandleFunc("GET /ui/prompts/{slug}/completions", s.completions)
	mux.HandleFunc("GET /ui/prompts/{slug}/links", s.links)
	mux.HandleFunc("POST /ui/prompts/{slug}/links", s.createLink)
	mux.HandleFunc("GET /ui/prompts/{slug}/links/{link_id}/revoke", s.revokeConfirm)
	mux.HandleFunc("POST /ui/prompts/{slug}/links/{link_id}/revoke", s.revokeLink)
}

// noticeOf is the confirmation of the change a form made, read back from the prompt as it now
// is: ?pinned=tag when the tag points at a version, ?bound=n for version n's model. A query
// that names nothing real shows nothing.
func noticeOf(q url.Values, d promptData) string {
	if name := q.Get("pinned"); name != "" {
		for _, t := range d.Tags {
			if t.Name == name {
				return "The tag " + name + " now points at version " + strconv.Itoa(t.Version) + "."
			}
		}
	}
	if n, err := strconv.Atoi(q.Get("bound")); err == nil {
		for _, v := range d.Versions {
			if v.Number == n {
				if v.Model == "" {
					return "Version " + strconv.Itoa(n) + " has no model bound now."
				}
				return "Version " + strconv.Itoa(n) + " is now bound to the model " + v.Model + "."
			}
		}
	}
	return ""
}

// pinData is the confirm step of a pin: what the tag points at now (Current, 0 when the tag is
// new) and what it will point at, with the diff of the two texts.
type pinData struct {
	Slug, URL string
	Tag       string
	Version   int
	Current   int
	Diff      *diffResult
	// Error is why the pin was refused (a stale confirm, the API's refusal).
	Error string
}

// pinConfirm serves GET /ui/prompts/{slug}/pin?tag=&version=: the confirm step of a pin,
// showing the tag's current version, the new one and the diff between them. Nothing changes.
func (s *server) pinConfirm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, status, err := s.pinState(r, r.PathValue("slug"), strings.TrimSpace(q.Get("tag")), q.Get("version"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, status, "prompt-pin", page{Title: "Pin " + d.Tag + " of " + d.Slug, Nav: "prompts", Data: d})
}

// pinState reads the prompt and its tags through the API and checks the pin asked for: a tag
// name the API takes (not "latest", which follows the newest version) and an existing version.
func (s *server) pinState(r *http.Request, slug, tag, version string) (pinData, int, error) {
	if !api.IsSlug(slug) {
		return pinData{}, 0, errs.NotFound("There is no such prompt.")
	}
	c, ctx := s.api(r)
	versions, err := c.PromptVersions(ctx, slug)
	if err == nil && len(versions) == 0 {
		err = errs.NotFound("There is no such prompt.")
	}
	if err != nil {
		return pinData{}, 0, err
	}
	if err := checkPinTag(tag); err != nil {
		return pinData{}, 0, err
	}
	n, err := strconv.Atoi(version)
	i := slices.IndexFunc(versions, func(v api.PromptVersion) bool { return v.Version == n })
	if err != nil || i < 0 {
		return pinData{}, 0, errs.Invalid("This prompt has versions 1 to %d: choose one of them to pin.", versions[len(versions)-1].Version)
	}
	tags, err := c.PromptTags(ctx, slug)
	if err != nil {
		return pinData{}, 0, err
	}
	d := pinData{Slug: slug, URL: promptURL(slug), Tag: tag, Version: n}
	old := ""
	for _, t := range tags {
		if t.Tag == tag {
			d.Current = t.Version
		}
	}
	for _, v := range versions {
		if v.Version == d.Current {
			old = v.Content
		}
	}
	res := diffText(old, versions[i].Content)
	d.Diff = &res
	return d, http.StatusOK, nil
}

// checkPinTag refuses a tag the API would not pin, in the dashboard's words.
func checkPinTag(tag string) error {
	if !api.IsTag(tag) {
		return errs.Invalid("Name the tag with 1 to 64 lowercase letters, digits and hyphens, as production or staging.")
	}
	if tag == api.LatestTag {
		return errs.Invalid("The tag latest cannot be pinned: it always points at the newest version.")
	}
	return nil
}

// pin serves POST /ui/prompts/{slug}/pin: tag, version, and expected, the version the confirm
// step showed the tag at (0: the tag was new). expected is the pin's precondition
// (client.IfTagAt), which the API checks on the tag's own write, so nothing is read first and
// no pin can slip in between: a tag that moved since the confirm step is refused (409) and the
// confirm step is shown anew, with the API's message and the tag as it now is.
func (s *server) pin(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	slug, tag := r.PathValue("slug"), strings.TrimSpace(f.Get("tag"))
	if !api.IsSlug(slug) {
		s.fail(w, r, errs.NotFound("There is no such prompt."))
		return
	}
	if err := checkPinTag(tag); err != nil {
		s.fail(w, r, err)
		return
	}
	n, nerr := strconv.Atoi(f.Get("version"))
	expected, xerr := strconv.Atoi(f.Get("expected"))
	if nerr != nil || n < 1 || xerr != nil || expected < 0 {
		s.fail(w, r, errs.Invalid("The confirm form is incomplete: start again from the prompt's page."))
		return
	}
	c, ctx := s.api(r)
	_, err := c.PinTag(ctx, slug, tag, n, client.IfTagAt(expected))
	var ce *client.Error
	switch {
	case err == nil:
		http.Redirect(w, r, promptURL(slug)+"?pinned="+url.QueryEscape(tag)+"#tags", http.StatusSeeOther)
	case errors.As(err, &ce) && ce.Code == api.CodeConflict:
		d, _, err := s.pinState(r, slug, tag, strconv.Itoa(n))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		d.Error = "The tag " + tag + " moved since this page was shown: " + ce.Message +
			". Nothing was changed: check the change below and confirm again."
		s.render(w, r, http.StatusConflict, "prompt-pin", page{Title: "Pin " + d.Tag + " of " + d.Slug, Nav: "prompts", Data: d})
	case errors.As(err, &ce) && ce.Code == api.CodeNotFound:
		// No such prompt or version: pinState reads the prompt to say which versions it has.
		_, _, rerr := s.pinState(r, slug, tag, strconv.Itoa(n))
		s.fail(w, r, cmp.Or(rerr, err))
	default:
		s.fail(w, r, err)
	}
}

// bindModel serves POST /ui/prompts/{slug}/versions/{version}/model: model_id binds that model,
// action=unbind unbinds. The API's refusal re-shows the prompt page with the form's input.
func (s *server) bindModel(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	n, err := strconv.Atoi(r.PathValue("version"))
	if !api.IsSlug(slug) || err != nil || n < 1 {
		s.fail(w, r, errs.NotFound("There is no such prompt version."))
		return
	}
	var model *string
	if r.PostForm.Get("action") != "unbind" {
		m := r.PostForm.Get("model_id")
		model = &m
	}
	c, ctx := s.api(r)
	_, err = c.BindModel(ctx, slug, n, model)
	if err == nil {
		http.Redirect(w, r, promptURL(slug)+"?bound="+strconv.Itoa(n)+"#version-"+strconv.Itoa(n), http.StatusSeeOther)
		return
	}
	status, msg, ok := formError(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	d, _, lerr := s.loadPrompt(r, slug)
	if lerr != nil {
		s.fail(w, r, lerr)
		return
	}
	d.Bind = &bindForm{Version: n, Model: deref(model), Error: msg}
	s.render(w, r, status, "prompt", page{Title: "Prompt " + slug, Nav: "prompts", Data: d})
}

// completionsShown is how many of a prompt's completions a page shows.
const completionsShown = 20

type completionRow struct {
	SpanID, TraceID string
	Version         int
	StartedAt       time.Time
	Input, Output   shown
	SpanURL         string
	Human           []api.HumanFeedbackItem
	Judges          []judgeScore
}

// judgeScore is a judge's evaluation of a completion: its score when it scores, else pass or
// fail.
type judgeScore struct {
	Judge, Score, Reason string
}

type completionsData struct {
	Slug, URL string
	Rows      []completionRow
	// Versions are the prompt's version numbers, for the filter; Version is the one chosen (0: all).
	Versions []int
	Version  int
	// First is the first page's URL when this is a later one; Next the following page's.
	First, Next string
}

// completions serves GET /ui/prompts/{slug}/completions: a page of the prompt's completions
// (GET /projects/{project_id}/prompts/{slug}/completions), newest first, each with its version,
// input and output and its feedback and judge evaluations. ?version=n keeps one version's;
// ?cursor= is a later page.
func (s *server) completions(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	if !api.IsSlug(slug) {
		s.fail(w, r, errs.NotFound("There is no such prompt."))
		return
	}
	q := r.URL.Query()
	opts := client.CompletionsOptions{Limit: completionsShown, Cursor: q.Get("cursor")}
	if v := q.Get("version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.fail(w, r, errs.Invalid("The version must be a version number."))
			return
		}
		opts.Version = n
	}
	c, ctx := s.api(r)
	versions, err := c.PromptVersions(ctx, slug)
	if err == nil && len(versions) == 0 {
		err = errs.NotFound("There is no such prompt.")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := c.PromptCompletions(ctx, slug, opts)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	base := promptURL(slug) + "/completions"
	d := completionsData{Slug: slug, URL: promptURL(slug), Version: opts.Version}
	for _, v := range versions {
		d.Versions = append(d.Versions, v.Version)
	}
	slices.Sort(d.Versions)
	slices.Reverse(d.Versions)
	filter := url.Values{}
	if opts.Version > 0 {
		filter.Set("version", strconv.Itoa(opts.Version))
	}
	if opts.Cursor != "" {
		d.First = pageURL(base, filter, 0)
	}
	if list.NextCursor != nil {
		next := maps.Clone(filter)
		next.Set("cursor", *list.NextCursor)
		d.Next = pageURL(base, next, 0)
	}
	for _, cp := range list.Completions {
		row := completionRow{SpanID: cp.SpanID, TraceID: cp.TraceID, StartedAt: cp.StartedAt,
			Input: excerpt(cp.Input), Output: excerpt(cp.Output), Human: cp.Feedback,
			SpanURL: spanURL(cp.TraceID, cp.SpanID)}
		if cp.PromptVersion != nil {
			row.Version = *cp.PromptVersion
		}
		for _, e := range cp.Evaluations {
			row.Judges = append(row.Judges, scoreOf(e))
		}
		d.Rows = append(d.Rows, row)
	}
	s.render(w, r, http.StatusOK, "prompt-completions", page{Title: "Completions of " + slug, Nav: "prompts", Data: d})
}

func scoreOf(e api.Evaluation) judgeScore {
	j := judgeScore{Judge: cmp.Or(e.JudgeName, e.JudgeID), Score: "fail", Reason: e.EvaluationReason}
	switch {
	case e.Score != nil:
		j.Score = strconv.FormatFloat(*e.Score, 'g', 4, 64)
		if e.ScoreMax != nil {
			j.Score += " / " + strconv.FormatFloat(*e.ScoreMax, 'g', 4, 64)
		}
	case e.EvaluationResult:
		j.Score = "pass"
	}
	return j
}

// excerptBytes cuts a completion's input and output on the list, shorter than the API's
// excerpt.
const excerptBytes = 600

func excerpt(e api.Excerpt) shown {
	if e.Text == nil {
		return shown{}
	}
	cut, _ := textcut.Cut(*e.Text, excerptBytes)
	return shown{Text: cut, Present: true, Omitted: e.Bytes - len(cut)}
}

// linksData is the feedback links page: the prompt's links (the API lists the project's; the
// page keeps this prompt's), the link just created with its URL, shown this once.
type linksData struct {
	Slug, URL string
	Links     []api.Link
	Created   *api.Link
	Notice    string
	// Hours is the lifetime form's input, re-shown with Error.
	Hours, Error string
}

// links serves GET /ui/prompts/{slug}/links.
func (s *server) links(w http.ResponseWriter, r *http.Request) {
	d, err := s.loadLinks(r, r.PathValue("slug"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if id := r.URL.Query().Get("revoked"); id != "" {
		for _, l := range d.Links {
			if l.ID == id && l.Status == api.LinkRevoked {
				d.Notice = "The link was revoked: it no longer opens."
			}
		}
	}
	s.render(w, r, http.StatusOK, "prompt-links", page{Title: "Feedback links of " + d.Slug, Nav: "prompts", Data: d})
}

func (s *server) loadLinks(r *http.Request, slug string) (linksData, error) {
	if !api.IsSlug(slug) {
		return linksData{}, errs.NotFound("There is no such prompt.")
	}
	c, ctx := s.api(r)
	versions, err := c.PromptVersions(ctx, slug)
	if err == nil && len(versions) == 0 {
		err = errs.NotFound("There is no such prompt.")
	}
	if err != nil {
		return linksData{}, err
	}
	list, err := c.FeedbackLinks(ctx)
	if err != nil {
		return linksData{}, err
	}
	d := linksData{Slug: slug, URL: promptURL(slug)}
	for _, l := range list.Links {
		if l.PromptSlug == slug {
			d.Links = append(d.Links, l)
		}
	}
	return d, nil
}

// createLink serves POST /ui/prompts/{slug}/links: expires_in_hours (empty: the API's default
// of 7 days). The answer is the page itself, not a redirect: the link's URL carries its token,
// which the API shows once and which must not go into a redirect's URL.
func (s *server) createLink(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	d, err := s.loadLinks(r, slug)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req := api.LinkRequest{PromptSlug: slug, LinkType: api.LinkTypeCompletion}
	d.Hours = strings.TrimSpace(r.PostForm.Get("expires_in_hours"))
	if d.Hours != "" {
		h, ok := parseNumber(d.Hours)
		if !ok {
			d.Error = "Give the lifetime in hours, as 24, or leave it empty for 7 days."
			s.render(w, r, http.StatusBadRequest, "prompt-links", page{Title: "Feedback links of " + slug, Nav: "prompts", Data: d})
			return
		}
		req.ExpiresInHours = &h
	}
	c, ctx := s.api(r)
	link, err := c.CreateFeedbackLink(ctx, req)
	if err != nil {
		status, msg, ok := formError(err)
		if !ok {
			s.fail(w, r, err)
			return
		}
		d.Error = msg
		s.render(w, r, status, "prompt-links", page{Title: "Feedback links of " + slug, Nav: "prompts", Data: d})
		return
	}
	if d, err = s.loadLinks(r, slug); err != nil {
		s.fail(w, r, err)
		return
	}
	d.Created = &link
	s.render(w, r, http.StatusCreated, "prompt-links", page{Title: "Feedback links of " + slug, Nav: "prompts", Data: d})
}

type revokeData struct {
	Slug, URL string
	Link      api.Link
}

// linkOf finds link id among the prompt's links; another prompt's or project's is not found.
func (s *server) linkOf(r *http.Request) (revokeData, error) {
	slug, id := r.PathValue("slug"), r.PathValue("link_id")
	if err := validID("feedback link", id); err != nil {
		return revokeData{}, err
	}
	d, err := s.loadLinks(r, slug)
	if err != nil {
		return revokeData{}, err
	}
	for _, l := range d.Links {
		if l.ID == id {
			return revokeData{Slug: slug, URL: d.URL, Link: l}, nil
		}
	}
	return revokeData{}, errs.NotFound("There is no such feedback link.")
}

// revokeConfirm serves GET /ui/prompts/{slug}/links/{link_id}/revoke: the confirm step.
func (s *server) revokeConfirm(w http.ResponseWriter, r *http.Request) {
	d, err := s.linkOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	step := revokeLinkStep(d.Link, d.URL+"/links/"+url.PathEscape(d.Link.ID)+"/revoke", d.URL+"/links", "Feedback links of "+d.Slug)
	s.render(w, r, http.StatusOK, "confirm", page{Title: "Revoke a feedback link of " + d.Slug, Nav: "prompts", Data: step})
}

// revokeLink serves POST /ui/prompts/{slug}/links/{link_id}/revoke.
func (s *server) revokeLink(w http.ResponseWriter, r *http.Request) {
	d, err := s.linkOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	if _, err := c.RevokeFeedbackLink(ctx, d.Link.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, d.URL+"/links?revoked="+url.QueryEscape(d.Link.ID), http.StatusSeeOther)
}
