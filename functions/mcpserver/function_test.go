package mcpserver

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/llm"
)

// TestModelsConfigured: what config://server-context says of model providers, decided from the
// configuration without calling a model or reading the provider secret.
func TestModelsConfigured(t *testing.T) {
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
	})
	models := func(cfg llm.Config, creds aws.CredentialsProvider) func(context.Context) (*llm.Client, error) {
		return func(context.Context) (*llm.Client, error) {
			return llm.New(cfg, llm.Options{AWSCredentials: creds}), nil
		}
	}
	tests := []struct {
		name   string
		cfg    config.Config
		models func(*testing.T) func(context.Context) (*llm.Client, error)
		want   bool
	}{
		{name: "no model client", want: false},
		{
			name: "a provider secret: not read",
			cfg:  config.Config{ProviderSecret: "arn:aws:secretsmanager:us-east-1:123456789012:secret:plume-keys"},
			models: func(t *testing.T) func(context.Context) (*llm.Client, error) {
				return func(context.Context) (*llm.Client, error) {
					t.Error("the model client was built: the secret would have been read")
					return nil, nil
				}
			},
			want: true,
		},
		{
			name: "the default judge model's provider has no key",
			models: func(*testing.T) func(context.Context) (*llm.Client, error) {
				return models(llm.Config{Providers: map[string]llm.Endpoint{}}, creds)
			},
			want: false,
		},
		{
			name: "the default judge model's provider has a key",
			models: func(*testing.T) func(context.Context) (*llm.Client, error) {
				return models(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {APIKey: "sk-x"}}}, nil)
			},
			want: true,
		},
		{
			name: "judges on Bedrock with the function's role",
			models: func(*testing.T) func(context.Context) (*llm.Client, error) {
				return models(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderBedrock: {Region: "us-east-1"}},
					JudgeModel: "bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0"}, creds)
			},
			want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c app.Clients
			if tt.models != nil {
				c.Models = tt.models(t)
			}
			assert.Equal(t, tt.want, modelsConfigured(app.NewEnv(tt.cfg, c)))
		})
	}
}
