package prompts

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// maxReadBytes bounds what a command reads from standard input.
const maxReadBytes = 1 << 20

func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxReadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > maxReadBytes {
		return nil, cmdutil.FlagErrorf("standard input is larger than %d bytes", maxReadBytes)
	}
	return b, nil
}

// Diff is what `prompts diff --output json` answers.
type Diff struct {
	From    api.PromptVersion `json:"from"`
	To      api.PromptVersion `json:"to"`
	Changed bool              `json:"changed"`
	// Unified is the change of content as a unified diff ("" when the contents are equal).
	Unified string `json:"unified"`
	// ModelChanged tells a change of bound model.
	ModelChanged bool `json:"model_changed"`
}

func newCmdDiff(f *cmdutil.Factory) *cobra.Command {
	var exitCode bool
	cmd := &cobra.Command{
		Use:   "diff <slug> <from> [to]",
		Short: "Compare two versions of a prompt (a version number or a tag each; to defaults to the newest)",
		Example: `  plume prompts diff support-bot production
  plume prompts diff support-bot 2 5 --exit-code`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				from, err := c.PromptVersion(ctx, args[0], selector(args[1]))
				if err != nil {
					return err
				}
				to := "latest"
				if len(args) == 3 {
					to = args[2]
				}
				toV, err := c.PromptVersion(ctx, args[0], selector(to))
				if err != nil {
					return err
				}
				d := Diff{From: from, To: toV, Unified: unified(describe(from), describe(toV), from.Content, toV.Content),
					ModelChanged: deref(from.ModelID) != deref(toV.ModelID)}
				d.Changed = d.Unified != "" || d.ModelChanged
				if f.IO.JSON() {
					err = f.IO.WriteJSON(d)
				} else {
					err = writeDiff(f.IO.Out, d)
				}
				if err == nil && exitCode && d.Changed {
					return cmdutil.ErrDiffers
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit 1 when the versions differ, as git diff --exit-code does")
	return cmd
}

func writeDiff(w io.Writer, d Diff) error {
	var b strings.Builder
	if d.ModelChanged {
		fmt.Fprintf(&b, "model: %s -> %s\n", orNone(d.From.ModelID), orNone(d.To.ModelID))
	}
	b.WriteString(d.Unified)
	if !d.Changed {
		fmt.Fprintf(&b, "%s and %s are the same\n", describe(d.From), describe(d.To))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orNone(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

// contextLines is how many unchanged lines a hunk shows around a change.
const contextLines = 3

// maxDiffCells bounds the line-by-line comparison (lines of a times lines of b); beyond it the
// whole text is shown replaced.
const maxDiffCells = 4 << 20

// op is one line of an edit script: ' ' kept, '-' removed, '+' added.
type op struct {
	kind byte
	line string
}

// unified is the unified diff of a and b ("" when equal), from the longest common subsequence
// of their lines.
func unified(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	script := edits(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for start := 0; start < len(script); {
		if script[start].kind == ' ' {
			start++
			continue
		}
		// A hunk: from contextLines before the change to contextLines after the last change
		// that is within 2*contextLines of the previous one.
		lo := max(0, start-contextLines)
		hi := start
		for i := start; i < len(script) && i-hi <= 2*contextLines; i++ {
			if script[i].kind != ' ' {
				hi = i
			}
		}
		end := min(len(script), hi+contextLines+1)
		oldStart, newStart := lineAt(script, lo)
		var oldN, newN int
		var body strings.Builder
		for _, e := range script[lo:end] {
			body.WriteByte(e.kind)
			body.WriteString(e.line)
			body.WriteByte('\n')
			if e.kind != '+' {
				oldN++
			}
			if e.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n%s", oldStart, oldN, newStart, newN, body.String())
		start = end
	}
	return out.String()
}

// lineAt is the 1-based line numbers in a and b where script[i] is.
func lineAt(script []op, i int) (int, int) {
	a, b := 1, 1
	for _, e := range script[:i] {
		if e.kind != '+' {
			a++
		}
		if e.kind != '-' {
			b++
		}
	}
	return a, b
}

// edits is an edit script from x to y by dynamic programming over the longest common
// subsequence, or x removed and y added when the texts are too large for it.
func edits(x, y []string) []op {
	var script []op
	if len(x)*len(y) > maxDiffCells {
		for _, l := range x {
			script = append(script, op{'-', l})
		}
		for _, l := range y {
			script = append(script, op{'+', l})
		}
		return script
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			script = append(script, op{' ', x[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			script = append(script, op{'-', x[i]})
			i++
		default:
			script = append(script, op{'+', y[j]})
			j++
		}
	}
	for ; i < len(x); i++ {
		script = append(script, op{'-', x[i]})
	}
	for ; j < len(y); j++ {
		script = append(script, op{'+', y[j]})
	}
	return script
}
