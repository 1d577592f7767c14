package config

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/awstest"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/llm"
)

// countingSecrets counts the reads of a real Secrets Manager client.
type countingSecrets struct {
	*awsjson.Client
	reads atomic.Int32
}

func (c *countingSecrets) Call(ctx context.Context, op string, in, out any) error {
	if op == "GetSecretValue" {
		c.reads.Add(1)
	}
	return c.Client.Call(ctx, op, in, out)
}

// secrets is Secrets Manager in moto, reached as a function reaches it.
func secrets(t *testing.T) *awsjson.Client {
	return awsjson.New(awstest.Config(t), awsjson.SecretsManager)
}

func TestProviderSecretEnv(t *testing.T) {
	api := &countingSecrets{Client: secrets(t)}
	id := awstest.NewSecret(t, "plume-providers", `{
		"OPENAI_API_KEY": "sk-from-secret",
		"ANTHROPIC_API_KEY": " sk-ant-from-secret ",
		"GROQ_API_KEY": "",
		"PLUME_JUDGE_MODEL": "anthropic/claude-haiku"
	}`)
	env := map[string]string{"OPENAI_API_KEY": "sk-from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "GROQ_API_KEY": "gsk-from-env"}

	getenv, err := ProviderSecretEnv(t.Context(), api, id, func(k string) string { return env[k] })
	require.NoError(t, err)

	tests := []struct{ name, want string }{
		{"OPENAI_API_KEY", "sk-from-secret"},         // the secret first
		{"ANTHROPIC_API_KEY", "sk-ant-from-secret"},  // trimmed
		{"OPENAI_BASE_URL", "http://127.0.0.1:9/v1"}, // not in the secret: the environment's
		{"GROQ_API_KEY", "gsk-from-env"},             // empty in the secret: unset there
		{"PLUME_JUDGE_MODEL", "anthropic/claude-haiku"},
		{"TABLE_NAME", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, getenv(tt.name), tt.name)
	}
	cfg := llm.ConfigFromEnv(getenv)
	assert.Equal(t, "sk-from-secret", cfg.Providers[llm.ProviderOpenAI].APIKey)
	assert.Equal(t, "anthropic/claude-haiku", cfg.JudgeModel)
	assert.EqualValues(t, 1, api.reads.Load(), "the secret is read once")
}

func TestProviderSecretEnvRefuses(t *testing.T) {
	const value = "sk-SECRET-VALUE"
	tests := []struct {
		name   string
		secret string
		errs   []string // what the error says
	}{
		{"unknown name", `{"OPENAI_API_KEY": "` + value + `", "AWS_SECRET_ACCESS_KEY": "` + value + `"}`, []string{"unknown names AWS_SECRET_ACCESS_KEY (want names among OPENAI_API_KEY, "}},
		{"value not a string", `{"OPENAI_API_KEY": {"key": "` + value + `"}, "GROQ_API_KEY": 12}`, []string{"values of GROQ_API_KEY, OPENAI_API_KEY are not strings"}},
		{"key where a name belongs", `{"sk-SECRET-VALUE": "OPENAI_API_KEY", "lower_case": "x"}`, []string{"2 names that are not variable names (not shown"}},
		{"array", `["` + value + `"]`, []string{"not a JSON object"}},
		{"plain key", value, []string{"not a JSON object"}},
		{"broken JSON", `{"OPENAI_API_KEY": "` + value + `",`, []string{"not a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := awstest.NewSecret(t, "plume-providers", tt.secret)
			getenv, err := ProviderSecretEnv(t.Context(), secrets(t), id, func(string) string { return "" })
			require.Error(t, err)
			assert.Nil(t, getenv)
			assert.Contains(t, err.Error(), id)
			for _, s := range tt.errs {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), "SECRET-VALUE", "a value in the error")
		})
	}
}

func TestProviderSecretEnvUnreadable(t *testing.T) {
	client := awstest.SecretsManager(t)
	missing := "plume-providers-that-do-not-exist"
	_, err := ProviderSecretEnv(t.Context(), secrets(t), missing, func(string) string { return "" })
	require.ErrorIs(t, err, awsjson.ErrNotFound)
	assert.ErrorContains(t, err, `read secret "`+missing+`"`)

	// A binary secret has no SecretString.
	binary := "plume-providers-binary-" + uuid.NewString()
	_, err = client.CreateSecret(t.Context(), &secretsmanager.CreateSecretInput{Name: &binary, SecretBinary: []byte(`{"OPENAI_API_KEY":"x"}`)})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = client.DeleteSecret(context.Background(), &secretsmanager.DeleteSecretInput{SecretId: &binary, ForceDeleteWithoutRecovery: aws.Bool(true)})
	})
	_, err = ProviderSecretEnv(t.Context(), secrets(t), binary, func(string) string { return "" })
	assert.ErrorContains(t, err, "no SecretString")
}
