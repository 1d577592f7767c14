package dashboard

import (
	"fmt"
	"math"
	"strings"
)

// The overview's charts are SVG drawn here: geometry in a fixed viewBox (chartW × chartH user
// units, scaled to the page's width by CSS), bars or points placed by the server, so that the
// page needs no script and no inline style. Each chart also carries its figures as a table
// (chart.Rows) for screen readers and for anyone who wants the numbers.
const (
	chartW, chartH       = 600.0, 200.0
	chartLeft, chartTop  = 72.0, 10.0
	chartRight, chartBot = 8.0, 28.0
)

// chart is one SVG chart.
type chart struct {
	ID, Title, Unit string
	// Summary is the chart's text alternative (its aria-label).
	Summary string
	// YMax is the top of the y axis as shown; XLabels the x axis ticks.
	YMax    string
	XLabels []chartTick
	Bars    []chartBar
	Series  []chartSeries
	Rows    []chartRow
	// Left, Top, Right, Bottom are the plot area's edges, for the axes.
	Left, Top, Right, Bottom float64
}

type chartTick struct {
	X     float64
	Label string
}

type chartBar struct {
	X, Y, W, H float64
	Label      string // bucket and value, the bar's <title>
}

// chartSeries is a line with a point per bucket that has a value; the line is broken where a
// bucket has none (Segments: the points attributes of its polylines, runs of two points or more).
type chartSeries struct {
	Name, Class string
	Segments    []string
	Dots        []chartDot
}

type chartDot struct {
	X, Y  float64
	Label string
}

type chartRow struct {
	Bucket string
	Values []string
}

// axis is the buckets' names (labels, in the tables and summaries) and their short names
// (ticks, every nth of them shown under the x axis).
type axis struct {
	labels, ticks []string
	every         int
}

func newChart(id, title, unit string) chart {
	return chart{ID: id, Title: title, Unit: unit,
		Left: chartLeft, Top: chartTop, Right: chartW - chartRight, Bottom: chartH - chartBot}
}

func (c *chart) slot(n int) float64 { return (c.Right - c.Left) / float64(n) }

func (c *chart) y(v, top float64) float64 {
	if top <= 0 {
		return c.Bottom
	}
	return c.Bottom - v/top*(c.Bottom-c.Top)
}

func (c *chart) ticks(a axis) {
	w := c.slot(len(a.labels))
	for i, l := range a.ticks {
		if i%a.every == 0 {
			c.XLabels = append(c.XLabels, chartTick{X: round1(c.Left + w*(float64(i)+.5)), Label: l})
		}
	}
}

// barChart draws one bar per bucket (a zero-height bar for an empty one).
func barChart(id, title, unit string, a axis, values []float64, format func(float64) string) chart {
	c := newChart(id, title, unit)
	top := niceMax(values)
	c.YMax = format(top)
	w := c.slot(len(values))
	peak, peakAt, total := 0.0, 0, 0.0
	for i, v := range values {
		y := c.y(v, top)
		c.Bars = append(c.Bars, chartBar{X: round1(c.Left + w*float64(i) + w*.1), Y: round1(y), W: round1(w * .8), H: round1(c.Bottom - y),
			Label: a.labels[i] + ": " + format(v)})
		c.Rows = append(c.Rows, chartRow{Bucket: a.labels[i], Values: []string{format(v)}})
		if v > peak {
			peak, peakAt = v, i
		}
		total += v
	}
	c.ticks(a)
	c.Summary = fmt.Sprintf("%s per bucket, %d buckets from %s to %s.", title, len(values), a.labels[0], a.labels[len(a.labels)-1])
	if peak > 0 {
		c.Summary += fmt.Sprintf(" Highest: %s at %s.", format(peak), a.labels[peakAt])
	} else {
		c.Summary += " All zero."
	}
	return c
}

// lineChart draws a line per series over the buckets where it has a value (NaN: none).
func lineChart(id, title, unit string, a axis, names []string, series [][]float64, format func(float64) string) chart {
	c := newChart(id, title, unit)
	var all []float64
	for _, s := range series {
		for _, v := range s {
			if !math.IsNaN(v) {
				all = append(all, v)
			}
		}
	}
	top := niceMax(all)
	c.YMax = format(top)
	w := c.slot(len(a.labels))
	for k, s := range series {
		cs := chartSeries{Name: names[k], Class: fmt.Sprintf("series%d", k)}
		var run []string
		flush := func() {
			if len(run) > 1 {
				cs.Segments = append(cs.Segments, strings.Join(run, " "))
			}
			run = nil
		}
		for i, v := range s {
			if math.IsNaN(v) {
				flush()
				continue
			}
			x, y := round1(c.Left+w*(float64(i)+.5)), round1(c.y(v, top))
			run = append(run, fmt.Sprintf("%g,%g", x, y))
			cs.Dots = append(cs.Dots, chartDot{X: x, Y: y, Label: fmt.Sprintf("%s %s: %s", a.labels[i], names[k], format(v))})
		}
		flush()
		c.Series = append(c.Series, cs)
	}
	for i, l := range a.labels {
		row := chartRow{Bucket: l}
		for _, s := range series {
			if math.IsNaN(s[i]) {
				row.Values = append(row.Values, "–")
			} else {
				row.Values = append(row.Values, format(s[i]))
			}
		}
		c.Rows = append(c.Rows, row)
	}
	c.ticks(a)
	if len(all) == 0 {
		c.Summary = fmt.Sprintf("%s: no data from %s to %s.", title, a.labels[0], a.labels[len(a.labels)-1])
	} else {
		n := 0
		for _, v := range series[0] {
			if !math.IsNaN(v) {
				n++
			}
		}
		c.Summary = fmt.Sprintf("%s per bucket, %d buckets from %s to %s, %d with data. Highest: %s.", title, len(a.labels), a.labels[0], a.labels[len(a.labels)-1], n, format(top0(all)))
	}
	return c
}

func top0(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

// niceMax is the top of a y axis: the largest value rounded up to 1, 2 or 5 times a power of
// ten (1 when every value is zero).
func niceMax(vs []float64) float64 {
	m := top0(vs)
	if m <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(m)))
	for _, f := range []float64{1, 2, 5, 10} {
		if m <= f*p {
			return f * p
		}
	}
	return 10 * p
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
