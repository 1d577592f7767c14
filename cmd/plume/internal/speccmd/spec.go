// Package speccmd holds `plume spec cli`: the command-line contract as data, for coding agents
// and for the tests that keep the documentation honest.
package speccmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// CLI is the machine-readable contract of the command line.
type CLI struct {
	Name        string    `json:"name"`
	GlobalFlags []Flag    `json:"global_flags"`
	ExitCodes   []Exit    `json:"exit_codes"`
	Commands    []Command `json:"commands"`
}

// Command is one runnable command.
type Command struct {
	Path    string `json:"path"`  // "plume prompts get"
	Usage   string `json:"usage"` // "plume prompts get <slug> [flags]"
	Short   string `json:"short"`
	Example string `json:"example,omitempty"`
	Flags   []Flag `json:"flags"`
}

// Flag is one flag of a command.
type Flag struct {
	Name      string `json:"name"`
	Shorthand string `json:"shorthand,omitempty"`
	Type      string `json:"type"`
	Default   string `json:"default"`
	Usage     string `json:"usage"`
}

// Exit is one exit code.
type Exit struct {
	Code    int    `json:"code"`
	Meaning string `json:"meaning"`
}

// exitCodes mirror the root command's help.
var exitCodes = []Exit{
	{0, "success"},
	{1, "differences found, with --exit-code"},
	{2, "usage or validation error: bad flags or arguments, invalid input, not found, conflict"},
	{3, "authentication or permission error: no API key or a refused one, no usable AWS credentials"},
	{4, "remote or network error: timeouts, an unreachable server, 429 and 5xx answers"},
}

// NewCmdSpec returns the `plume spec` command group.
func NewCmdSpec(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spec <command>",
		Short: "Describe the command line itself",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	var format string
	cli := &cobra.Command{
		Use:   "cli",
		Short: "Print every command, its flags and the exit codes, as JSON or Markdown",
		Example: `  plume spec cli --format json | jq '.commands[].path'
  plume spec cli --format markdown > CLI.md`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec := Describe(cmd.Root())
			switch format {
			case "json":
				return f.IO.WriteJSON(spec)
			case "markdown":
				return writeMarkdown(f.IO.Out, spec)
			}
			return cmdutil.FlagErrorf("--format: want json or markdown, got %q", format)
		},
	}
	cli.Flags().StringVar(&format, "format", "json", "json or markdown")
	cmd.AddCommand(cli)
	return cmd
}

// Describe walks the command tree from root: every runnable command that is not hidden, in
// the order of their paths.
func Describe(root *cobra.Command) CLI {
	spec := CLI{Name: root.Name(), GlobalFlags: flags(root.PersistentFlags()), ExitCodes: exitCodes}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if !sub.HasSubCommands() {
				spec.Commands = append(spec.Commands, Command{Path: sub.CommandPath(), Usage: sub.UseLine(),
					Short: sub.Short, Example: sub.Example, Flags: flags(sub.NonInheritedFlags())})
			}
			walk(sub)
		}
	}
	walk(root)
	slices.SortFunc(spec.Commands, func(a, b Command) int { return strings.Compare(a.Path, b.Path) })
	return spec
}

func flags(set *pflag.FlagSet) []Flag {
	out := []Flag{}
	set.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden || fl.Name == "help" {
			return
		}
		_, usage := pflag.UnquoteUsage(fl)
		out = append(out, Flag{Name: fl.Name, Shorthand: fl.Shorthand, Type: fl.Value.Type(), Default: fl.DefValue, Usage: usage})
	})
	return out
}

func writeMarkdown(w io.Writer, spec CLI) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s command line\n\n## Global flags\n\n", spec.Name)
	writeFlags(&b, spec.GlobalFlags)
	b.WriteString("\n## Exit codes\n\n| code | meaning |\n|---|---|\n")
	for _, e := range spec.ExitCodes {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, e.Meaning)
	}
	for _, c := range spec.Commands {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n```\n%s\n```\n", c.Path, c.Short, c.Usage)
		if c.Example != "" {
			fmt.Fprintf(&b, "\nExample:\n\n```\n%s\n```\n", c.Example)
		}
		if len(c.Flags) > 0 {
			b.WriteString("\n")
			writeFlags(&b, c.Flags)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFlags(b *strings.Builder, fs []Flag) {
	b.WriteString("| flag | type | default | meaning |\n|---|---|---|---|\n")
	for _, fl := range fs {
		name := "--" + fl.Name
		if fl.Shorthand != "" {
			name = "-" + fl.Shorthand + ", " + name
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", name, fl.Type, fl.Default, strings.ReplaceAll(fl.Usage, "|", `\|`))
	}
}
