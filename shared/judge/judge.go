package judge

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/textcut"
)

// Evaluation types.
const (
	TypeBinary = "binary"
	TypeScored = "scored"
)

// Tag filter match modes.
const (
	MatchAll = "all"
	MatchAny = "any"
)

// Defaults of a new judge (COMPAT.md, "Feedback and judges").
const (
	DefaultScoreMin   = 0
	DefaultScoreMax   = 10
	DefaultSampleRate = 1.0
	// passFraction places the default pass threshold of a scored judge: min + 0.7 x range.
	passFraction = 0.7
)

// Limits of a judge definition.
const (
	MaxNameLen        = 200
	MaxTemplateBytes  = api.MaxJudgeTemplateBytes
	MaxModelLen       = 256
	MaxCriteria       = 20
	MaxCriterionLabel = 200
	MaxCriterionDesc  = 2000
	MaxTagFilterKeys  = 20
	MaxTagFilterVals  = 20
	MaxBackfill       = api.MaxJudgeBackfill
	maxCriterionKey   = 64
)

// Judge is an automated evaluator of llm spans: a prompt for a judge model (Template), how its
// verdict is read (binary pass/fail, or a score with a pass threshold), and which spans it
// samples. Counters are kept by the store as evaluations are written.
type Judge struct {
	ID             string
	ProjectID      string
	Name           string
	Template       string
	EvaluationType string
	// ScoreMin, ScoreMax and PassThreshold apply to scored judges only (nil for binary ones).
	ScoreMin      *float64
	ScoreMax      *float64
	PassThreshold *float64
	SampleRate    float64
	Temperature   float64
	// Model is the judge model; "" means the deployment's default.
	Model     string
	TagFilter *TagFilter
	// TargetPrompt restricts the judge to spans linked to that prompt slug ("" = any).
	TargetPrompt string
	// Criteria are given explicitly or inferred from the template (CriteriaInferred).
	Criteria         []Criterion
	CriteriaInferred bool
	Paused           bool
	Backfill         int
	// TemplateVersion numbers the judge's templates: 1 for the one it was created with, one
	// more each time the template changes (TemplateVersions lists them).
	TemplateVersion int
	// TemplateRun is the optimization run the current template was deployed from ("" when a
	// person wrote it).
	TemplateRun string
	// LinkedPrompts are the prompts whose optimization this judge guides.
	LinkedPrompts   []string
	EvaluationCount int64
	PassCount       int64
	CreatedAt       time.Time
	CreatedBy       string
	UpdatedAt       time.Time
	UpdatedBy       string
}

// TagFilter selects spans by tags: with Match "all" every key must have one of its values, with
// "any" one key suffices.
type TagFilter struct {
	Tags  map[string][]string
	Match string
}

// Criterion is one aspect a judge scores separately.
type Criterion struct {
	Key         string
	Label       string
	Description string
}

// PassRate is the share of evaluations that passed, nil before the first one.
func (j Judge) PassRate() *float64 {
	if j.EvaluationCount == 0 {
		return nil
	}
	r := float64(j.PassCount) / float64(j.EvaluationCount)
	return &r
}

// Scored reports whether the judge gives scores.
func (j Judge) Scored() bool { return j.EvaluationType == TypeScored }

// InRange reports whether v lies within the judge's score range.
func (j Judge) InRange(v float64) bool {
	return j.Scored() && v >= *j.ScoreMin && v <= *j.ScoreMax
}

// HasCriterion reports whether key names one of the judge's criteria.
func (j Judge) HasCriterion(key string) bool {
	return slices.ContainsFunc(j.Criteria, func(c Criterion) bool { return c.Key == key })
}

// Spec is a judge definition as a client sends it (api.JudgeRequest), to create a judge or (as
// a patch) to change one. A nil field is absent; in a patch, the Clear* flags record an
// explicit null.
type Spec struct {
	Name           *string
	Template       *string
	EvaluationType *string
	ScoreMin       *float64
	ScoreMax       *float64
	PassThreshold  *float64
	SampleRate     *float64
	Temperature    *float64
	Model          *string
	TagFilter      *TagFilter
	TargetPrompt   *string
	Criteria       *[]Criterion
	Paused         *bool
	Backfill       *int

	ClearTagFilter, ClearTargetPrompt, ClearCriteria, ClearModel bool

	// FromRun is the optimization run a new template comes from (its deploy).
	FromRun string
}

// New builds a judge from a creation spec, applying the defaults and validating the result.
// Criteria not given explicitly are inferred from the template.
func New(s Spec, projectID, id, by string, now time.Time) (Judge, error) {
	if s.Name == nil || strings.TrimSpace(*s.Name) == "" {
		return Judge{}, errs.Invalid("name is required")
	}
	if s.Template == nil || strings.TrimSpace(*s.Template) == "" {
		return Judge{}, errs.Invalid("template is required: the judge model's prompt")
	}
	j := Judge{
		ID: id, ProjectID: projectID, EvaluationType: TypeBinary, SampleRate: DefaultSampleRate,
		CreatedAt: now, CreatedBy: by, UpdatedAt: now, UpdatedBy: by,
	}
	if err := j.apply(s); err != nil {
		return Judge{}, err
	}
	return j, nil
}

// Patch returns j changed by s, validated. Changing the template re-infers criteria that were
// inferred; explicit criteria stay until replaced or cleared.
func Patch(j Judge, s Spec, by string, now time.Time) (Judge, error) {
	j.Criteria = slices.Clone(j.Criteria)
	if err := j.apply(s); err != nil {
		return Judge{}, err
	}
	j.UpdatedAt, j.UpdatedBy = now, by
	return j, nil
}

// apply sets the fields of s on j, fills the defaults that depend on them and validates j.
func (j *Judge) apply(s Spec) error {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&j.Name, s.Name)
	set(&j.Template, s.Template)
	set(&j.EvaluationType, s.EvaluationType)
	set(&j.Model, s.Model)
	set(&j.TargetPrompt, s.TargetPrompt)
	if s.ClearModel {
		j.Model = ""
	}
	if s.ClearTargetPrompt {
		j.TargetPrompt = ""
	}
	if s.SampleRate != nil {
		j.SampleRate = *s.SampleRate
	}
	if s.Temperature != nil {
		j.Temperature = *s.Temperature
	}
	if s.Paused != nil {
		j.Paused = *s.Paused
	}
	if s.Backfill != nil {
		j.Backfill = *s.Backfill
	}
	switch {
	case s.ClearTagFilter:
		j.TagFilter = nil
	case s.TagFilter != nil:
		f := *s.TagFilter
		if f.Match == "" {
			f.Match = MatchAll
		}
		j.TagFilter = &f
	}
	if err := j.applyScores(s); err != nil {
		return err
	}
	switch {
	case s.Criteria != nil:
		j.Criteria, j.CriteriaInferred = *s.Criteria, false
		if len(j.Criteria) == 0 {
			j.Criteria, j.CriteriaInferred = InferCriteria(j.Template), true
		}
	case s.ClearCriteria || j.Criteria == nil || (j.CriteriaInferred && s.Template != nil):
		j.Criteria, j.CriteriaInferred = InferCriteria(j.Template), true
	}
	if err := j.checkNumbers(); err != nil {
		return err
	}
	return j.validate()
}

// checkNumbers checks the numbers of j against their ranges (shared/bound) and stores them as
// checked (-0 as 0): sample_rate from 0 to 1, temperature from 0 to 2, the score range and
// the threshold from -1e9 to 1e9. They are chosen values: a nonzero one below bound.Floor is
// rejected, not rounded.
func (j *Judge) checkNumbers() error {
	var err error
	if j.SampleRate, err = checkNumber("sample_rate", j.SampleRate, bound.Fraction); err != nil {
		return err
	}
	if j.Temperature, err = checkNumber("temperature", j.Temperature, bound.Temperature); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		p    **float64
	}{{"score_min", &j.ScoreMin}, {"score_max", &j.ScoreMax}, {"pass_threshold", &j.PassThreshold}} {
		if *f.p == nil {
			continue
		}
		v, err := checkNumber(f.name, **f.p, bound.Score)
		if err != nil {
			return err
		}
		*f.p = &v // a new value: the judge j was copied from may share the old one
	}
	return nil
}

// checkNumber is r.Check(v) with an errs.Invalid error naming the field.
func checkNumber(name string, v float64, r bound.Range) (float64, error) {
	v, err := r.Check(v)
	if err != nil {
		return 0, errs.Invalid("%s: %v", name, err)
	}
	return v, nil
}

// applyScores sets the score range and pass threshold. A scored judge defaults to 0..10 with a
// threshold of min + 0.7 x range; the threshold follows a changed range unless it is given. A
// binary judge has none of them, and giving one is an error.
func (j *Judge) applyScores(s Spec) error {
	if j.EvaluationType != TypeScored {
		for _, f := range []struct {
			name string
			v    *float64
		}{{"score_min", s.ScoreMin}, {"score_max", s.ScoreMax}, {"pass_threshold", s.PassThreshold}} {
			if f.v != nil {
				return errs.Invalid("%s applies to scored judges only; set evaluation_type to %q", f.name, TypeScored)
			}
		}
		j.ScoreMin, j.ScoreMax, j.PassThreshold = nil, nil, nil
		return nil
	}
	rangeChanged := s.ScoreMin != nil || s.ScoreMax != nil || j.ScoreMin == nil
	pick := func(given, current *float64, def float64) *float64 {
		switch {
		case given != nil:
			return ptr(*given)
		case current != nil:
			return current
		}
		return ptr(def)
	}
	j.ScoreMin = pick(s.ScoreMin, j.ScoreMin, DefaultScoreMin)
	j.ScoreMax = pick(s.ScoreMax, j.ScoreMax, DefaultScoreMax)
	switch {
	case s.PassThreshold != nil:
		j.PassThreshold = ptr(*s.PassThreshold)
	case rangeChanged || j.PassThreshold == nil:
		j.PassThreshold = ptr(*j.ScoreMin + passFraction*(*j.ScoreMax-*j.ScoreMin))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

var criterionKeyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// validate checks every field of a complete judge.
func (j Judge) validate() error {
	switch {
	case strings.TrimSpace(j.Name) == "" || len(j.Name) > MaxNameLen:
		return errs.Invalid("name must have 1 to %d bytes", MaxNameLen)
	case strings.TrimSpace(j.Template) == "" || len(j.Template) > MaxTemplateBytes:
		return errs.Invalid("template must have 1 to %d bytes", MaxTemplateBytes)
	case j.EvaluationType != TypeBinary && j.EvaluationType != TypeScored:
		return errs.Invalid("evaluation_type must be %q or %q, not %q", TypeBinary, TypeScored, j.EvaluationType)
	case !(j.SampleRate >= 0 && j.SampleRate <= 1):
		return errs.Invalid("sample_rate must be between 0 and 1")
	case !(j.Temperature >= 0 && j.Temperature <= 2):
		return errs.Invalid("temperature must be between 0 and 2")
	case len(j.Model) > MaxModelLen:
		return errs.Invalid("model must have at most %d bytes", MaxModelLen)
	case j.Backfill < 0 || j.Backfill > MaxBackfill:
		return errs.Invalid("backfill must be between 0 and %d", MaxBackfill)
	}
	if j.TargetPrompt != "" {
		if err := prompt.ValidateSlug(j.TargetPrompt); err != nil {
			return errs.Prefix("target_prompt", err)
		}
	}
	if j.Scored() {
		lo, hi, pass := *j.ScoreMin, *j.ScoreMax, *j.PassThreshold
		switch {
		case !finite(lo) || !finite(hi) || lo >= hi:
			return errs.Invalid("score_min must be below score_max")
		case !finite(pass) || pass < lo || pass > hi:
			return errs.Invalid("pass_threshold must lie between score_min (%g) and score_max (%g)", lo, hi)
		}
	}
	if err := validateTagFilter(j.TagFilter); err != nil {
		return err
	}
	return validateCriteria(j.Criteria)
}

func validateTagFilter(f *TagFilter) error {
	if f == nil {
		return nil
	}
	if f.Match != MatchAll && f.Match != MatchAny {
		return errs.Invalid("tag_filter.match must be %q or %q", MatchAll, MatchAny)
	}
	if len(f.Tags) == 0 || len(f.Tags) > MaxTagFilterKeys {
		return errs.Invalid("tag_filter.tags must have 1 to %d keys", MaxTagFilterKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Tags)) {
		if k == "" || len(k) > 128 {
			return errs.Invalid("tag_filter.tags: keys must have 1 to 128 bytes")
		}
		if n := len(f.Tags[k]); n == 0 || n > MaxTagFilterVals {
			return errs.Invalid("tag_filter.tags[%q] must list 1 to %d values", k, MaxTagFilterVals)
		}
	}
	return nil
}

func validateCriteria(cs []Criterion) error {
	if len(cs) > MaxCriteria {
		return errs.Invalid("criteria: at most %d", MaxCriteria)
	}
	seen := map[string]bool{}
	for i, c := range cs {
		switch {
		case len(c.Key) > maxCriterionKey || !criterionKeyPattern.MatchString(c.Key):
			return errs.Invalid("criteria[%d].key %q must be lower snake case (a-z, 0-9, _), starting with a letter, at most %d bytes", i, c.Key, maxCriterionKey)
		case seen[c.Key]:
			return errs.Invalid("criteria[%d].key %q is repeated", i, c.Key)
		case len(c.Label) > MaxCriterionLabel:
			return errs.Invalid("criteria[%d].label: at most %d bytes", i, MaxCriterionLabel)
		case len(c.Description) > MaxCriterionDesc:
			return errs.Invalid("criteria[%d].description: at most %d bytes", i, MaxCriterionDesc)
		}
		seen[c.Key] = true
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Headings and bold labels that structure a judge prompt rather than name a criterion.
var structuralLabels = map[string]bool{
	"instructions": true, "instruction": true, "task": true, "role": true, "context": true,
	"input": true, "inputs": true, "output": true, "outputs": true, "output_format": true,
	"response_format": true, "format": true, "example": true, "examples": true, "notes": true,
	"note": true, "criteria": true, "evaluation_criteria": true, "rubric": true, "scoring": true,
	"scoring_rubric": true, "guidelines": true, "response": true, "answer": true, "question": true,
	"conversation": true, "system_prompt": true, "evaluation": true,
}

// The patterns InferCriteria reads a template with, compiled on its first call: they are
// needed when a judge is created, not at every start (boldPattern's bounded repeat alone
// compiles to 200 copies of its class).
var (
	headingPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$`) })
	// boldPattern matches "**Label**: text", "**Label:** text", "- **Label** - text" and
	// "1. **Label** text" at the start of a line.
	boldPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(?:[-*+]\s+|\d+[.)]\s+)?\*\*([^*\n]{1,200}?)\*\*\s*[:\-–—]?\s*(.*)$`)
	})
)

// InferCriteria reads criteria from a judge template's structure: markdown headings and bold
// labels at the start of a line each name one, keyed in lower snake case. The text after a bold
// label, or the first paragraph under a heading, is its description. Labels that structure a
// prompt (Instructions, Output format, Examples ...) are skipped, so are repeats; at most
// MaxCriteria are kept.
func InferCriteria(template string) []Criterion {
	var out []Criterion
	seen := map[string]bool{}
	lines := strings.Split(strings.ReplaceAll(template, "\r\n", "\n"), "\n")
	for i, line := range lines {
		var label, desc string
		if m := headingPattern().FindStringSubmatch(line); m != nil {
			label, desc = stripMarkup(m[1]), paragraphAfter(lines[i+1:])
		} else if m := boldPattern().FindStringSubmatch(line); m != nil {
			label, desc = stripMarkup(m[1]), strings.TrimSpace(m[2])
		} else {
			continue
		}
		label = strings.TrimRight(label, ": ")
		key := snakeKey(label)
		if key == "" || seen[key] || structuralLabels[key] {
			continue
		}
		seen[key] = true
		out = append(out, Criterion{Key: key, Label: textcut.Prefix(label, MaxCriterionLabel), Description: textcut.Prefix(desc, MaxCriterionDesc)})
		if len(out) == MaxCriteria {
			break
		}
	}
	return out
}

// paragraphAfter returns the first paragraph of lines, stopping at a blank line after text, a
// heading or a bold label.
func paragraphAfter(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "" && len(parts) > 0:
			return strings.Join(parts, " ")
		case t == "":
			continue
		case headingPattern().MatchString(l) || boldPattern().MatchString(l):
			return strings.Join(parts, " ")
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}

func stripMarkup(s string) string {
	return strings.TrimSpace(strings.NewReplacer("**", "", "__", "", "`", "").Replace(s))
}

// snakeKey turns a label into a criterion key: lowercase ASCII letters and digits, every other
// run of characters one underscore, starting with a letter, at most 64 bytes.
func snakeKey(label string) string {
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(label) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
		default:
			pending = true
		}
	}
	key := strings.TrimLeft(b.String(), "0123456789_")
	if len(key) > maxCriterionKey {
		key = strings.TrimRight(key[:maxCriterionKey], "_")
	}
	return key
}

// TemplateVersion is one of a judge's templates: the one it was created with, or one that
// replaced it, by an edit or by deploying an optimization run.
type TemplateVersion struct {
	Version   int
	Template  string
	CreatedAt time.Time
	CreatedBy string
	// Source says where it came from: SourceCreate, SourceEdit or SourceOptimization.
	Source string
	// RunID is the optimization run a deployed template came from.
	RunID string
}

// Sources of a template version.
const (
	SourceCreate       = "create"
	SourceEdit         = "edit"
	SourceOptimization = "optimization"
)
