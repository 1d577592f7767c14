package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"unicode"
)

// tapLine is one line of ddbtap's log: one DynamoDB request, priced by AWS's rules (aw, ar) and
// as DynamoDB Local reported it (lw, lr). /work/shared/tools/ddbtap.py documents the fields.
type tapLine struct {
	Phase  string  `json:"phase"`
	Op     string  `json:"op"`
	Status int     `json:"status"`
	Class  string  `json:"cls"`
	AW     float64 `json:"aw"`
	GW     float64 `json:"gw"`
	AR     float64 `json:"ar"`
	LW     float64 `json:"lw"`
	LR     float64 `json:"lr"`
	Fail   int     `json:"fail"`
	N      int     `json:"n"`
}

// cost is what the DynamoDB requests of a phase cost by AWS's rules.
type cost struct {
	Requests   int            `json:"requests"`
	ReadUnits  float64        `json:"read_units"`
	WriteUnits float64        `json:"write_units"`
	GSIWrites  float64        `json:"gsi_write_units"`
	Failed     int            `json:"failed_writes"`
	Errors     int            `json:"errors"` // answers other than 200 that are not failed conditions
	ByOp       map[string]int `json:"by_op"`
}

func (c *cost) add(l tapLine) {
	c.Requests++
	c.ReadUnits += l.AR
	c.WriteUnits += l.AW
	c.GSIWrites += l.GW
	c.Failed += l.Fail
	if l.Status != http.StatusOK && l.Fail == 0 {
		c.Errors++
	}
	if c.ByOp == nil {
		c.ByOp = map[string]int{}
	}
	c.ByOp[l.Op]++
}

func (c *cost) merge(o cost) {
	c.Requests += o.Requests
	c.ReadUnits += o.ReadUnits
	c.WriteUnits += o.WriteUnits
	c.GSIWrites += o.GSIWrites
	c.Failed += o.Failed
	c.Errors += o.Errors
	for op, n := range o.ByOp {
		if c.ByOp == nil {
			c.ByOp = map[string]int{}
		}
		c.ByOp[op] += n
	}
}

// sumPhases adds up the whole lines of r by phase. It answers how many bytes it read: up to
// the end of the last whole line, so that a line ddbtap is still writing is read next time.
func sumPhases(r io.Reader) (map[string]cost, int64, error) {
	out := map[string]cost{}
	br := bufio.NewReaderSize(r, 1<<20)
	var read int64
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, read, nil // an unfinished line (or none) is left for the next read
		}
		if err != nil {
			return nil, read, err
		}
		read += int64(len(line))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var l tapLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, read, fmt.Errorf("ddbtap log line %q: %w", line, err)
		}
		c := out[l.Phase]
		c.add(l)
		out[l.Phase] = c
	}
}

// tap is ddbtap running in front of DynamoDB: its phase switch and its log.
type tap struct {
	url, log string
	http     *http.Client

	mu     sync.Mutex
	offset int64
	costs  map[string]cost
}

func newTap(tapURL, logPath string) *tap {
	return &tap{url: tapURL, log: logPath, http: &http.Client{}, costs: map[string]cost{}}
}

// phaseName is name as ddbtap logs it: it keeps the request's path as sent, so a name is made
// of characters a path carries unescaped.
func phaseName(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.:@", r)) {
			return r
		}
		return '_'
	}, name)
}

// phase tags the requests ddbtap logs from now on with name.
func (t *tap) phase(ctx context.Context, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url+"/__phase/"+phaseName(name), nil)
	if err != nil {
		return err
	}
	res, err := t.http.Do(req)
	if err != nil {
		return fmt.Errorf("ddbtap phase %s: %w", name, err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("ddbtap phase %s: %s", name, res.Status)
	}
	return nil
}

// cost answers what the requests of phase cost so far: it reads what the log gained since the
// last call. ddbtap writes a request's line before it answers it, so a phase's requests are
// all in the log once the requests have been answered.
func (t *tap) cost(phase string) (cost, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := os.Open(t.log)
	if err != nil {
		return cost{}, err
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return cost{}, err
	}
	sums, n, err := sumPhases(f)
	if err != nil {
		return cost{}, err
	}
	t.offset += n
	for p, c := range sums {
		all := t.costs[p]
		all.merge(c)
		t.costs[p] = all
	}
	return t.costs[phaseName(phase)], nil
}
