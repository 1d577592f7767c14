package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
)

// Windows of the judge page's performance chart.
const (
	// perfWindows weekly windows, the newest ending now, draw the performance chart.
	perfWindows = 8
	perfWindow  = 7 * 24 * time.Hour
)

// perfPoint is one window of the performance chart.
type perfPoint struct {
	Label, Accuracy, Kappa string
	N                      int
	// X, Y, H place the window's bar in the chart (400 × 140, bars up to 100 high from y 110);
	// Has is false without calibrations.
	X, Y, H int
	Has     bool
}

// criterionRow is the agreement on one criterion as the page shows it.
type criterionRow struct {
	Key, N, Accuracy, Kappa, TPR, TNR, MAE string
}

type figure struct{ Label, Value, TestID string }

// perfFigures are the performance numbers the page shows.
func perfFigures(p api.JudgePerformance) []figure {
	out := []figure{
		{"Calibrations", strconv.Itoa(p.N), "perf-n"},
		{"Accuracy", percent(p.Verdict.Accuracy), "perf-accuracy"},
		{"Cohen's kappa", decimal(p.Verdict.Kappa), "perf-kappa"},
		{"True positive rate", percent(p.Verdict.TruePositiveRate), "perf-tpr"},
		{"True negative rate", percent(p.Verdict.TrueNegativeRate), "perf-tnr"},
	}
	if p.Score != nil {
		out = append(out, figure{"Mean absolute error", decimal(p.Score.MeanAbsoluteError), "perf-mae"})
	}
	return out
}

func decimal(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

// perfChart reads the judge's accuracy over the last perfWindows weeks: one API call a window,
// all at once.
func (s *server) perfChart(r *http.Request, judgeID string) ([]perfPoint, error) {
	c, ctx := s.api(r)
	now := s.d.Now().UTC()
	out := make([]perfPoint, perfWindows)
	var g errgroup.Group
	for i := range perfWindows { // window i ends (perfWindows-1-i) windows before now
		end := now.Add(-time.Duration(perfWindows-1-i) * perfWindow)
		start := end.Add(-perfWindow)
		g.Go(func() error {
			p, err := c.JudgePerformance(ctx, judgeID, start, end)
			if err != nil {
				return err
			}
			pt := perfPoint{Label: start.Format("Jan 2"), Accuracy: percent(p.Verdict.Accuracy), Kappa: decimal(p.Verdict.Kappa),
				N: p.N, X: i*50 + 5, Y: 110, Has: p.Verdict.Accuracy != nil}
			if pt.Has {
				pt.H = int(*p.Verdict.Accuracy*100 + 0.5)
				pt.Y = 110 - pt.H
			}
			out[i] = pt
			return nil
		})
	}
	return out, g.Wait()
}
