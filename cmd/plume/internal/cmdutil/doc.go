// Package cmdutil holds what every plume command shares: the Factory of dependencies (after
// cli/cli's pkg/cmdutil), the output streams with the global --output and --quiet settings, and
// FlagError, the error of a command line that cannot be run.
package cmdutil
