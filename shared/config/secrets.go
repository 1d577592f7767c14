package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/llm"
)

// SecretsAPI sends Secrets Manager's operations: an awsjson.Client of awsjson.SecretsManager.
type SecretsAPI interface {
	Call(ctx context.Context, op string, in, out any) error
}

var _ SecretsAPI = (*awsjson.Client)(nil)

// getSecretValueInput is the input of GetSecretValue.
// https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
type getSecretValueInput struct {
	SecretID string `json:"SecretId"`
}

// getSecretValueOutput is the part of GetSecretValue's answer read: SecretString is absent
// from a binary secret's.
type getSecretValueOutput struct {
	SecretString *string
}

// ProviderSecretEnv reads the Secrets Manager secret secretID (PLUME_PROVIDER_SECRET: its name
// or ARN) once and returns a getenv for llm.ConfigFromEnv that answers with the secret's
// values first and with getenv's for the names the secret does not set. A deployment keeps
// its provider keys there rather than in the functions' environment, where anyone who can
// read the function's configuration can read them.
//
// The secret's SecretString is a JSON object of string values named as the variables
// llm.ConfigFromEnv reads (llm.EnvNames):
//
//	{"OPENAI_API_KEY": "sk-...", "ANTHROPIC_API_KEY": "sk-ant-...", "PLUME_JUDGE_MODEL": "openai/gpt-4o-mini"}
//
// An empty value counts as unset. Any other name, a value that is not a string, or a secret
// that is not a JSON object is an error that names the secret and the offending names, never
// a value: the error is logged. A name that does not look like a variable name is counted,
// not shown, since it may be a key pasted where a name belongs.
func ProviderSecretEnv(ctx context.Context, api SecretsAPI, secretID string, getenv func(string) string) (func(string) string, error) {
	var out getSecretValueOutput
	if err := api.Call(ctx, "GetSecretValue", getSecretValueInput{SecretID: secretID}, &out); err != nil {
		return nil, fmt.Errorf("read secret %q: %w", secretID, err)
	}
	if out.SecretString == nil {
		return nil, fmt.Errorf("secret %q has no SecretString (is it a binary secret?): want a JSON object of provider variables", secretID)
	}
	values, err := providerValues([]byte(*out.SecretString))
	if err != nil {
		return nil, fmt.Errorf("secret %q: %w", secretID, err)
	}
	return func(name string) string {
		if v := values[name]; v != "" {
			return v
		}
		return getenv(name)
	}, nil
}

// providerValues decodes a provider secret. Its errors are its own, not encoding/json's: a
// syntax error of encoding/json quotes the character it stopped at, which may be part of a
// key.
func providerValues(secret []byte) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(secret, &raw); err != nil {
		return nil, errors.New("not a JSON object of provider variables")
	}
	known := llm.EnvNames()
	values := make(map[string]string, len(raw))
	var unknown, notString []string
	hidden := 0
	for name, v := range raw {
		var s string
		switch {
		case !slices.Contains(known, name) && !isVariableName(name):
			hidden++
		case !slices.Contains(known, name):
			unknown = append(unknown, name)
		case json.Unmarshal(v, &s) != nil:
			notString = append(notString, name)
		default:
			values[name] = strings.TrimSpace(s)
		}
	}
	slices.Sort(unknown)
	slices.Sort(notString)
	var errs []error
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("unknown names %s (want names among %s)", strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	if hidden > 0 {
		// A name that is no variable name may be a value put where a name belongs.
		errs = append(errs, fmt.Errorf("%d names that are not variable names (not shown: they may be keys put where names belong)", hidden))
	}
	if len(notString) > 0 {
		errs = append(errs, fmt.Errorf("values of %s are not strings", strings.Join(notString, ", ")))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return values, nil
}

// isVariableName reports whether s looks like an environment variable name (OPENAI_API_KEY):
// at most 64 upper-case letters, digits and underscores, not starting with a digit.
func isVariableName(s string) bool {
	if s == "" || len(s) > 64 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
