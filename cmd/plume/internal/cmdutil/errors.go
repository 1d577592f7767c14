package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FlagError is a usage error: a command line that cannot be run as written (unknown command or
// flag, missing or conflicting flags, a missing table name). The caller exits 2.
type FlagError struct{ err error }

// FlagErrorf returns a FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{err: fmt.Errorf(format, args...)}
}

// FlagErrorWrap returns err as a FlagError.
func FlagErrorWrap(err error) error { return &FlagError{err: err} }

// Error returns the message.
func (e *FlagError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e *FlagError) Unwrap() error { return e.err }

// IsFlagError reports whether err is or wraps a FlagError.
func IsFlagError(err error) bool {
	var fe *FlagError
	return errors.As(err, &fe)
}

// ErrDiffers is what a command run with --exit-code returns when it found differences, as git
// diff --exit-code does: the command did its work and printed its results, and the caller exits
// 1 without reporting an error.
var ErrDiffers = errors.New("differences found")

// NoArgs is a cobra.PositionalArgs that accepts no positional arguments. For a command group it
// reports an unknown subcommand, with cobra's suggestions.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's default
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
		}
		return FlagErrorf("%s", msg)
	}
	return FlagErrorf("%q takes no arguments, got %q", cmd.CommandPath(), args[0])
}

// ShowHelp is the RunE of a command group: it prints the group's help. NoArgs has already
// rejected unknown subcommands.
func ShowHelp(cmd *cobra.Command, _ []string) error { return cmd.Help() }

// UsageErrors makes the errors cobra finds in a command line itself FlagErrors, for every
// command under root, so that they exit 2 like any other usage error: wrong positional
// arguments (each command's Args), and flags marked required (checked before the command runs
// instead of by cobra, whose error is a plain one).
func UsageErrors(root *cobra.Command) {
	if args := root.Args; args != nil {
		root.Args = func(cmd *cobra.Command, a []string) error {
			err := args(cmd, a)
			if err != nil && !IsFlagError(err) {
				return FlagErrorWrap(err)
			}
			return err
		}
	}
	var required []string
	root.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
		if _, ok := fl.Annotations[cobra.BashCompOneRequiredFlag]; ok {
			delete(fl.Annotations, cobra.BashCompOneRequiredFlag)
			required = append(required, fl.Name)
		}
	})
	if run := root.RunE; run != nil && len(required) > 0 {
		root.RunE = func(cmd *cobra.Command, a []string) error {
			for _, name := range required {
				if !cmd.Flags().Changed(name) {
					return FlagErrorf("required flag --%s not set", name)
				}
			}
			return run(cmd, a)
		}
	}
	for _, sub := range root.Commands() {
		UsageErrors(sub)
	}
}
