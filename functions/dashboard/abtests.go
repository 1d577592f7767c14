package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// The A/B test pages: the project's tests (GET /projects/{project_id}/ab-tests) and a test's
// report (GET /projects/{project_id}/ab-tests/{test_name}), each one REST call, one Query of
// the table whatever the number of entities in the tests (docs/signals.md).

// abTestRoutes registers the A/B test pages: /ui/ab-tests and /ui/ab-tests/{test_name}.
func (s *server) abTestRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/ab-tests", s.abTests)
	mux.HandleFunc("GET /ui/ab-tests/{test_name}", s.abTest)
}

// maxTestName is the longest A/B test name (the SDK's choice name; shared/signal.MaxKeyLen).
const maxTestName = 128

// abTestRow is a test as the list shows it.
type abTestRow struct {
	api.ABTest
	URL      string
	Variants []string
	// PromptURL is the prompt page of a prompt split ("" for a test of ze.choose).
	PromptURL string
}

// abTests serves GET /ui/ab-tests.
func (s *server) abTests(w http.ResponseWriter, r *http.Request) {
	c, ctx := s.api(r)
	tests, err := c.ABTests(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := make([]abTestRow, len(tests))
	for i, t := range tests {
		rows[i] = abTestRow{ABTest: t, URL: "/ui/ab-tests/" + url.PathEscape(t.Name), Variants: variantTexts(t.Variants)}
		if t.Prompt != "" {
			rows[i].PromptURL = "/ui/prompts/" + url.PathEscape(t.Prompt)
		}
	}
	s.render(w, r, http.StatusOK, "ab-tests", page{Title: "A/B tests", Nav: "ab-tests", Data: rows})
}

// variantTexts says each variant with its value and share: "control = gpt-4o-mini (50%)".
func variantTexts(vs []api.ABVariant) []string {
	var total float64
	for _, v := range vs {
		total += v.Weight
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		share := 0.0
		if total > 0 {
			share = 100 * v.Weight / total
		}
		out[i] = fmt.Sprintf("%s = %s (%s%%)", v.Key, v.Value, strconv.FormatFloat(share, 'f', -1, 64))
		if i == 0 {
			out[i] += ", control"
		}
	}
	return out
}

// abReportData is a report as its page shows it.
type abReportData struct {
	Report    api.ABReport
	Variants  []string
	PromptURL string
	// Results are the variants' rows; Signals the rows of the signals table, one per signal
	// and variant.
	Results     []abVariantRow
	Signals     []abSignalRow
	Comparisons []abComparisonRow
	// Decision says when and how differences are declared.
	Decision string
}

type abVariantRow struct {
	Key     string
	Choices int64
	// Judges say each judge's verdicts on the variant's spans: "<id>: 3 of 4 passed (75%)".
	Judges   []string
	Feedback api.ABFeedback
}

type abSignalRow struct {
	Signal, Variant, Type string
	N                     int64
	Mean, Interval        string
}

type abComparisonRow struct {
	Signal, Variant, Control string
	Difference, T, DF, P     string
	// Verdict is "yes", "no" or "not yet" (before the horizon).
	Verdict string
}

// abTest serves GET /ui/ab-tests/{test_name}: 400 for a name no test can have, 404 for a test
// the project does not have (another project's included).
func (s *server) abTest(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("test_name")
	if name == "" || len(name) > maxTestName || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		s.fail(w, r, errs.Invalid("An A/B test's name has 1 to %d characters, without control characters.", maxTestName))
		return
	}
	c, ctx := s.api(r)
	rep, err := c.ABTest(ctx, name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := abReportData{Report: rep, Variants: variantTexts(rep.Variants)}
	if rep.Prompt != "" {
		d.PromptURL = "/ui/prompts/" + url.PathEscape(rep.Prompt)
	}
	for _, v := range rep.Results {
		row := abVariantRow{Key: v.Key, Choices: v.Choices, Feedback: v.Feedback}
		for _, j := range v.Judges {
			row.Judges = append(row.Judges, fmt.Sprintf("%s: %d of %d passed (%s%%)", j.JudgeID, j.Passed, j.Evaluations, statFigure(100*j.PassRate)))
		}
		d.Results = append(d.Results, row)
		for _, sg := range v.Signals {
			row := abSignalRow{Signal: sg.Name, Variant: v.Key, Type: sg.SignalType, N: sg.N, Mean: statFigure(sg.Mean), Interval: "–"}
			if sg.CILow != nil && sg.CIHigh != nil {
				row.Interval = "[" + statFigure(*sg.CILow) + ", " + statFigure(*sg.CIHigh) + "]"
			}
			d.Signals = append(d.Signals, row)
		}
	}
	for _, cmp := range rep.Comparisons {
		row := abComparisonRow{Signal: cmp.Signal, Variant: cmp.Variant, Control: cmp.Control, Difference: statFigure(cmp.Difference),
			T: optFigure(cmp.T), DF: optFigure(cmp.DF), P: optFigure(cmp.PValue), Verdict: "not yet"}
		if cmp.Significant != nil {
			row.Verdict = map[bool]string{true: "yes", false: "no"}[*cmp.Significant]
		}
		d.Comparisons = append(d.Comparisons, row)
	}
	when := rep.DecisionAt.UTC().Format("2006-01-02 15:04") + " UTC"
	if rep.Decided {
		d.Decision = "Decided at " + when + ": a difference is significant when its p-value is below " + statFigure(rep.Alpha) + "."
	} else {
		d.Decision = "Not decided until " + when + " (a fixed horizon: the p-values shown before it cannot declare a difference)."
	}
	s.render(w, r, http.StatusOK, "ab-test", page{Title: "A/B test " + rep.Name, Nav: "ab-tests", Data: d})
}

// statFigure writes a statistic with 4 significant digits.
func statFigure(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

func optFigure(f *float64) string {
	if f == nil {
		return "–"
	}
	return statFigure(*f)
}
