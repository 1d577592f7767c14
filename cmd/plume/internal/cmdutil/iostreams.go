package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Format is the value of the global --output flag. It implements pflag.Value.
type Format string

// The output formats.
const (
	FormatText Format = "text"
	FormatJSON Format = "json"
)

// String returns the format's name.
func (f *Format) String() string { return string(*f) }

// Set parses a format name; anything but text or json is an error.
func (f *Format) Set(s string) error {
	switch Format(s) {
	case FormatText, FormatJSON:
		*f = Format(s)
		return nil
	}
	return fmt.Errorf("want text or json, got %q", s)
}

// Type names the flag's value in help.
func (f *Format) Type() string { return "text|json" }

// IOStreams is where commands write: data to Out, messages for people to ErrOut.
type IOStreams struct {
	// In is standard input (--api-key-stdin, --file -).
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Format is the global --output: text (default) or json.
	Format Format
	// Quiet is the global --quiet: no informational messages on ErrOut. Data on Out and errors
	// are unaffected.
	Quiet bool
}

// JSON reports whether output is JSON.
func (s *IOStreams) JSON() bool { return s.Format == FormatJSON }

// WriteJSON writes v to Out as indented JSON.
func (s *IOStreams) WriteJSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON output: %w", err)
	}
	return nil
}

// Infof writes an informational line to ErrOut unless Quiet.
func (s *IOStreams) Infof(format string, args ...any) {
	if !s.Quiet {
		fmt.Fprintf(s.ErrOut, format+"\n", args...)
	}
}

// Warnf writes a warning line to ErrOut, "warning: " first, even with Quiet: it says that
// the data on Out is not what it seems (a partial list).
func (s *IOStreams) Warnf(format string, args ...any) {
	fmt.Fprintf(s.ErrOut, "warning: "+format+"\n", args...)
}

// IsTerminal reports whether r is a character device (a terminal) other than the null device:
// destructive commands ask for confirmation there, and refuse without --yes anywhere else.
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
