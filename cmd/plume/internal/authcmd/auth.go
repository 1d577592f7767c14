// Package authcmd holds `plume auth`: the client commands' credentials in the configuration
// file.
package authcmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdAuth returns the `plume auth` command group.
func NewCmdAuth(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth <command>",
		Short: "Store, show and clear the API key, base URL and project the client commands use",
		Long: `The client commands find each setting in the global flags (--api-key, --api-base-url,
--project-id), then in the environment (PLUME_API_KEY, PLUME_BASE_URL, PLUME_PROJECT_ID, then the
zeroeval SDKs' ZEROEVAL_API_KEY, ZEROEVAL_BASE_URL or ZEROEVAL_API_URL, ZEROEVAL_PROJECT_ID), then
in the configuration file that "plume auth set" writes: $XDG_CONFIG_HOME/plume/config.json, or
~/.config/plume/config.json, readable by its owner only.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdSet(f), newCmdShow(f), newCmdClear(f))
	return cmd
}

func newCmdSet(f *cmdutil.Factory) *cobra.Command {
	var keyStdin bool
	cmd := &cobra.Command{
		Use:   "set",
		Short: "Store credentials in the configuration file",
		Long: `Store the API key, base URL and project given by the global flags in the configuration
file, keeping what it holds for the settings not given. --api-key-stdin reads the key from
standard input, so that it appears in no command line or shell history.`,
		Example: `  plume auth set --api-base-url https://plume.example.com --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --api-key-stdin < key.txt
  plume auth set --api-key plm_...`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := f.Flags
			if keyStdin {
				b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 4096))
				if err != nil {
					return fmt.Errorf("read the key from standard input: %w", err)
				}
				in.APIKey = strings.TrimSpace(string(b))
				if in.APIKey == "" {
					return cmdutil.FlagErrorf("--api-key-stdin: standard input is empty")
				}
			}
			if in == (cmdutil.CredentialFlags{}) {
				return cmdutil.FlagErrorf("nothing to set: pass --api-key (or --api-key-stdin), --api-base-url or --project-id")
			}
			c, err := f.LoadConfig()
			if err != nil {
				return err
			}
			if in.APIKey != "" {
				c.APIKey = in.APIKey
			}
			if in.APIBaseURL != "" {
				c.APIBaseURL = strings.TrimRight(in.APIBaseURL, "/")
			}
			if in.ProjectID != "" {
				c.ProjectID = in.ProjectID
			}
			path, err := f.SaveConfig(c)
			if err != nil {
				return err
			}
			if f.IO.JSON() {
				return f.IO.WriteJSON(map[string]any{"path": path, "api_key": cmdutil.Redact(c.APIKey),
					"api_base_url": c.APIBaseURL, "project_id": c.ProjectID})
			}
			fmt.Fprintf(f.IO.Out, "Saved %s\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&keyStdin, "api-key-stdin", false, "read the API key from standard input")
	return cmd
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	redact := true
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the settings the client commands would use, and where each comes from",
		Args:  cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			creds, err := f.Credentials()
			if err != nil {
				return err
			}
			if redact {
				creds.APIKey.Value = cmdutil.Redact(creds.APIKey.Value)
			}
			path, err := f.ConfigPath()
			if err != nil {
				return err
			}
			if f.IO.JSON() {
				return f.IO.WriteJSON(map[string]any{"config_path": path, "api_key": creds.APIKey,
					"api_base_url": creds.APIBaseURL, "project_id": creds.ProjectID})
			}
			show := func(name string, s cmdutil.Setting) {
				if s.Value == "" {
					fmt.Fprintf(f.IO.Out, "%-13s (not set)\n", name+":")
					return
				}
				fmt.Fprintf(f.IO.Out, "%-13s %s (from %s)\n", name+":", s.Value, s.Source)
			}
			show("API key", creds.APIKey)
			show("API base URL", creds.APIBaseURL)
			show("Project", creds.ProjectID)
			fmt.Fprintf(f.IO.Out, "%-13s %s\n", "Config file:", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&redact, "redact", true, "hide all but the start of the API key (--redact=false shows it)")
	return cmd
}

func newCmdClear(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "clear",
		Short: "Remove the configuration file",
		Args:  cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			path, existed, err := f.ClearConfig()
			if err != nil {
				return err
			}
			if f.IO.JSON() {
				return f.IO.WriteJSON(map[string]any{"path": path, "removed": existed})
			}
			if existed {
				fmt.Fprintf(f.IO.Out, "Removed %s\n", path)
			} else {
				fmt.Fprintf(f.IO.Out, "No configuration file at %s\n", path)
			}
			return nil
		},
	}
}
