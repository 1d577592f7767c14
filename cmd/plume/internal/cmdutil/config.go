package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
)

// Config is what `plume auth set` stores in the configuration file: the client commands'
// credentials when neither flags nor the environment give them.
type Config struct {
	APIKey     string `json:"api_key,omitempty"`
	APIBaseURL string `json:"api_base_url,omitempty"`
	ProjectID  string `json:"project_id,omitempty"`
}

// ConfigPath is the configuration file: $XDG_CONFIG_HOME/plume/config.json, else
// ~/.config/plume/config.json.
func (f *Factory) ConfigPath() (string, error) {
	dir := f.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := f.Getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", errs.Invalid("no configuration directory: set HOME or XDG_CONFIG_HOME")
			}
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "plume", "config.json"), nil
}

// LoadConfig reads the configuration file; a missing file is an empty Config.
func (f *Factory) LoadConfig() (Config, error) {
	path, err := f.ConfigPath()
	if err != nil {
		return Config{}, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, errs.Invalid("read %s: %v", path, err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, errs.Invalid("%s is not a plume configuration (%v): fix it or run `plume auth clear`", path, err)
	}
	return c, nil
}

// SaveConfig writes c to the configuration file, readable by its owner only (0600, in a 0700
// directory). It is written to a temporary file renamed over the old one, so that a crash
// never leaves half a file.
func (f *Factory) SaveConfig(c Config) (string, error) {
	path, err := f.ConfigPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", errs.Invalid("create %s: %v", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return "", errs.Invalid("write %s: %v", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(append(b, '\n'))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", errs.Invalid("write %s: %v", path, err)
	}
	return path, nil
}

// ClearConfig removes the configuration file; it answers whether there was one.
func (f *Factory) ClearConfig() (string, bool, error) {
	path, err := f.ConfigPath()
	if err != nil {
		return "", false, err
	}
	err = os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return path, false, errs.Invalid("remove %s: %v", path, err)
	}
	return path, true, nil
}

// Setting is one resolved credential and where it came from: "flag", the environment
// variable's name, "config" or "" when none gave it.
type Setting struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Credentials are the client commands' resolved settings.
type Credentials struct {
	APIKey     Setting `json:"api_key"`
	APIBaseURL Setting `json:"api_base_url"`
	ProjectID  Setting `json:"project_id"`
}

// Credentials resolves each setting from the global flags, then the environment (PLUME_*, then
// the zeroeval SDKs' ZEROEVAL_*), then the configuration file.
func (f *Factory) Credentials() (Credentials, error) {
	file, err := f.LoadConfig()
	if err != nil {
		return Credentials{}, err
	}
	pick := func(flag, fromFile string, env ...string) Setting {
		if flag != "" {
			return Setting{flag, "flag"}
		}
		for _, name := range env {
			if v := strings.TrimSpace(f.Getenv(name)); v != "" {
				return Setting{v, name}
			}
		}
		if fromFile != "" {
			return Setting{fromFile, "config"}
		}
		return Setting{}
	}
	return Credentials{
		APIKey:     pick(f.Flags.APIKey, file.APIKey, "PLUME_API_KEY", "ZEROEVAL_API_KEY"),
		APIBaseURL: pick(f.Flags.APIBaseURL, file.APIBaseURL, "PLUME_BASE_URL", "ZEROEVAL_BASE_URL", "ZEROEVAL_API_URL"),
		ProjectID:  pick(f.Flags.ProjectID, file.ProjectID, "PLUME_PROJECT_ID", "ZEROEVAL_PROJECT_ID"),
	}, nil
}

// Client returns the API client of the resolved credentials. No base URL is a usage error
// (exit 2), no key an authentication error (exit 3).
func (f *Factory) Client() (*client.Client, error) {
	creds, err := f.Credentials()
	if err != nil {
		return nil, err
	}
	if creds.APIBaseURL.Value == "" {
		return nil, FlagErrorf("no API base URL: pass --api-base-url, set PLUME_BASE_URL, or run `plume auth set`")
	}
	if creds.APIKey.Value == "" {
		return nil, errs.Unauthenticated("no API key: pass --api-key, set PLUME_API_KEY, or run `plume auth set`")
	}
	opts := []client.Option{
		client.WithBaseURL(creds.APIBaseURL.Value),
		client.WithAPIKey(creds.APIKey.Value),
		client.WithProject(creds.ProjectID.Value),
		client.WithTimeout(f.Timeout),
		client.WithEnv(func(string) string { return "" }),
	}
	if f.HTTPClient != nil {
		opts = append(opts, client.WithHTTPClient(f.HTTPClient))
	}
	return client.New(opts...)
}

// ProjectClient is Client for the project-scoped commands: no project id is a usage error.
func (f *Factory) ProjectClient() (*client.Client, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	if c.Project() == "" {
		return nil, FlagErrorf("no project: pass --project-id, set PLUME_PROJECT_ID, or run `plume auth set --project-id`")
	}
	return c, nil
}

// Redact shows the start of a secret and hides the rest: "plm_AbC1…" (empty stays empty).
func Redact(secret string) string {
	if secret == "" {
		return ""
	}
	const shown = 8
	if len(secret) <= shown+4 {
		return strings.Repeat("*", len(secret))
	}
	return secret[:shown] + "…" + fmt.Sprintf("(%d chars)", len(secret))
}

// WithClient runs fn with what a client command needs to send its requests: o checked (when
// not nil), the API client (the project-scoped one when project is set) and cmd's context
// bounded by --timeout, cancelled when fn returns.
func (f *Factory) WithClient(cmd *cobra.Command, o *ListOptions, project bool, fn func(context.Context, *client.Client) error) error {
	if o != nil {
		if err := o.Check(); err != nil {
			return err
		}
	}
	newClient := f.Client
	if project {
		newClient = f.ProjectClient
	}
	c, err := newClient()
	if err != nil {
		return err
	}
	ctx, cancel := f.Context(cmd.Context())
	defer cancel()
	return fn(ctx, c)
}
