package dashboard

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

type promptRow struct {
	Slug      string
	Latest    int
	Model     string
	UpdatedAt time.Time
}

// prompts serves GET /ui/prompts: the project's prompts by slug (GET
// /projects/{project_id}/prompts).
func (s *server) prompts(w http.ResponseWriter, r *http.Request) {
	c, ctx := s.api(r)
	list, err := c.Prompts(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := make([]promptRow, len(list))
	for i, p := range list {
		rows[i] = promptRow{Slug: p.Slug, Latest: p.LatestVersion.Version, Model: deref(p.LatestVersion.ModelID), UpdatedAt: p.UpdatedAt}
	}
	s.render(w, r, http.StatusOK, "prompts", page{Title: "Prompts", Nav: "prompts", Data: rows})
}

// versionRow is one version of a prompt as its page lists it.
type versionRow struct {
	Number    int
	Tags      []string
	Model     string
	CreatedAt time.Time
	CreatedBy string
	Content   shown
	// PrevDiff is the URL of the diff with the version before, "" for the first.
	PrevDiff string
}

type promptData struct {
	Slug     string
	URL      string
	Versions []versionRow // newest first
	// Tags are the prompt's tags, "latest" first, for the deploy form.
	Tags []tagRow
	// From and To are the versions chosen in the diff form; Diff is their diff when asked.
	From, To int
	Diff     *diffResult
	// Notice confirms the change a form just made (after its redirect).
	Notice string
	// Bind is the model form of a version re-shown with the API's refusal.
	Bind *bindForm
}

// tagRow is one tag of a prompt.
type tagRow struct {
	Name      string
	Version   int
	UpdatedAt time.Time
	UpdatedBy string
}

// bindForm is the model form of one version as sent, with the API's error.
type bindForm struct {
	Version int
	Model   string
	Error   string
}

// diffParam is the diff query parameter: "2..5", version 2 against version 5.
var diffParam = regexp.MustCompile(`^([0-9]{1,9})\.\.([0-9]{1,9})$`)

// prompt serves GET /ui/prompts/{slug}: the versions of a prompt newest first, with their tags,
// bound models and texts, and with ?diff=A..B (or from=A&to=B, as its form sends them) the
// word diff of version A against version B. It carries the forms that pin a tag and bind a
// model (promptwrite.go), and confirms their changes (?pinned=tag, ?bound=n).
func (s *server) prompt(w http.ResponseWriter, r *http.Request) {
	from, to, asked, err := parseDiff(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, byNumber, err := s.loadPrompt(r, r.PathValue("slug"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if asked {
		a, okA := byNumber[from]
		b, okB := byNumber[to]
		if !okA || !okB {
			s.fail(w, r, errs.Invalid("This prompt has versions 1 to %d: choose two of them to compare.", d.To))
			return
		}
		res := diffText(a.Content, b.Content)
		d.From, d.To, d.Diff = from, to, &res
	}
	d.Notice = noticeOf(r.URL.Query(), d)
	s.render(w, r, http.StatusOK, "prompt", page{Title: "Prompt " + d.Slug, Nav: "prompts", Data: d})
}

// loadPrompt reads the prompt's versions and tags (GET /projects/{project_id}/prompts/{slug}/
// versions and tags); an unknown slug is not found.
func (s *server) loadPrompt(r *http.Request, slug string) (promptData, map[int]api.PromptVersion, error) {
	if !api.IsSlug(slug) {
		return promptData{}, nil, errs.NotFound("There is no such prompt.")
	}
	c, ctx := s.api(r)
	versions, err := c.PromptVersions(ctx, slug)
	if err == nil && len(versions) == 0 {
		err = errs.NotFound("There is no such prompt.")
	}
	if err != nil {
		return promptData{}, nil, err
	}
	tags, err := c.PromptTags(ctx, slug)
	if err != nil {
		return promptData{}, nil, err
	}
	base := promptURL(slug)
	d := promptData{Slug: slug, URL: base}
	tagsOf := map[int][]string{}
	for _, t := range tags {
		tagsOf[t.Version] = append(tagsOf[t.Version], t.Tag)
		d.Tags = append(d.Tags, tagRow{Name: t.Tag, Version: t.Version, UpdatedAt: t.UpdatedAt, UpdatedBy: t.UpdatedBy})
	}
	byNumber := make(map[int]api.PromptVersion, len(versions))
	for _, v := range slices.Backward(versions) {
		byNumber[v.Version] = v
		row := versionRow{Number: v.Version, Tags: tagsOf[v.Version], Model: deref(v.ModelID), CreatedAt: v.CreatedAt,
			CreatedBy: v.CreatedBy, Content: show(&v.Content)}
		if v.Version > 1 {
			row.PrevDiff = base + "?diff=" + strconv.Itoa(v.Version-1) + ".." + strconv.Itoa(v.Version)
		}
		d.Versions = append(d.Versions, row)
	}
	d.To = d.Versions[0].Number
	d.From = d.Versions[min(1, len(d.Versions)-1)].Number
	return d, byNumber, nil
}

// promptURL is the page of prompt slug.
func promptURL(slug string) string { return "/ui/prompts/" + url.PathEscape(slug) }

// parseDiff reads the versions to compare: diff=A..B, or from=A and to=B. asked is false when
// neither is given.
func parseDiff(q url.Values) (from, to int, asked bool, err error) {
	bad := errs.Invalid("Choose two versions to compare, as diff=2..5.")
	var a, b string
	switch {
	case q.Has("diff"):
		m := diffParam.FindStringSubmatch(q.Get("diff"))
		if m == nil {
			return 0, 0, false, bad
		}
		a, b = m[1], m[2]
	case q.Has("from") || q.Has("to"):
		a, b = q.Get("from"), q.Get("to")
	default:
		return 0, 0, false, nil
	}
	from, errA := strconv.Atoi(a)
	to, errB := strconv.Atoi(b)
	if errA != nil || errB != nil || from < 1 || to < 1 {
		return 0, 0, false, bad
	}
	return from, to, true, nil
}
