package llm_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/llm"
)

// TestConfigured: a model is configured when its provider has what Complete needs, read from
// the environment as a deployment reads it; nothing is sent.
func TestConfigured(t *testing.T) {
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
	})
	tests := []struct {
		name  string
		env   map[string]string
		creds aws.CredentialsProvider
		model string
		want  bool
	}{
		{"no provider", nil, nil, "openai/gpt-4o-mini", false},
		{"openai key", map[string]string{"OPENAI_API_KEY": "sk-x"}, nil, "openai/gpt-4o-mini", true},
		{"another provider's key", map[string]string{"ANTHROPIC_API_KEY": "sk-x"}, nil, "openai/gpt-4o-mini", false},
		{"anthropic key, bare name", map[string]string{"ANTHROPIC_API_KEY": "sk-x"}, nil, "claude-3-5-haiku-latest", true},
		{"keyless local server", map[string]string{"OLLAMA_HOST": "127.0.0.1:11434"}, nil, "ollama/llama3", true},
		{"azure key without its base URL", map[string]string{"AZURE_OPENAI_API_KEY": "k"}, nil, "azure/gpt-4o", false},
		{"bedrock with region and credentials", map[string]string{"AWS_REGION": "us-east-1"}, creds, "bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0", true},
		{"bedrock without credentials", map[string]string{"AWS_REGION": "us-east-1"}, nil, "bedrock/amazon.nova-lite-v1:0", false},
		{"unknown model", map[string]string{"OPENAI_API_KEY": "sk-x"}, nil, "my-finetune", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := llm.New(llm.ConfigFromEnv(func(k string) string { return tt.env[k] }), llm.Options{AWSCredentials: tt.creds})
			assert.Equal(t, tt.want, c.Configured(tt.model))
		})
	}
}
