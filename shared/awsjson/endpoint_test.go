package awsjson_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/awsjson"
)

// source answers the configured-endpoint questions as a configuration's sources do.
type source struct {
	ignore    *bool
	endpoints map[string]string // by SDK id
}

func (s source) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	if s.ignore == nil {
		return false, false, nil
	}
	return *s.ignore, true, nil
}

func (s source) GetServiceBaseEndpoint(_ context.Context, id string) (string, bool, error) {
	u, ok := s.endpoints[id]
	return u, ok, nil
}

// TestEndpoint: the endpoint each service's requests go to, as the SDK's client of the
// service resolves it (the oracle), for the regions and configured endpoints Plume meets.
func TestEndpoint(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		cfg  aws.Config
	}{
		{"region", aws.Config{Region: "eu-west-3"}},
		{"China", aws.Config{Region: "cn-north-1"}},
		{"GovCloud", aws.Config{Region: "us-gov-west-1"}},
		{"AWS_ENDPOINT_URL", aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:5077")}},
		{"the service's own", aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:5077"),
			ConfigSources: []any{source{endpoints: map[string]string{"SQS": "http://sqs.local:1", "EventBridge": "http://eb.local:2", "Secrets Manager": "http://sm.local:3", "DynamoDB Streams": "http://streams.local:4"}}}}},
		{"ignored", aws.Config{Region: "us-east-1",
			ConfigSources: []any{source{ignore: &yes, endpoints: map[string]string{"SQS": "http://sqs.local:1", "EventBridge": "http://eb.local:2", "Secrets Manager": "http://sm.local:3", "DynamoDB Streams": "http://streams.local:4"}}}}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sq := sqs.NewFromConfig(tt.cfg).Options()
			want, err := sqs.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, sqs.EndpointParameters{Region: &sq.Region, Endpoint: sq.BaseEndpoint})
			require.NoError(t, err)
			assert.Equal(t, want.URI.String(), awsjson.New(tt.cfg, awsjson.SQS).Endpoint(), "SQS")

			eb := eventbridge.NewFromConfig(tt.cfg).Options()
			want, err = eventbridge.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, eventbridge.EndpointParameters{Region: &eb.Region, Endpoint: eb.BaseEndpoint})
			require.NoError(t, err)
			assert.Equal(t, want.URI.String(), awsjson.New(tt.cfg, awsjson.EventBridge).Endpoint(), "EventBridge")

			sm := secretsmanager.NewFromConfig(tt.cfg).Options()
			want, err = secretsmanager.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, secretsmanager.EndpointParameters{Region: &sm.Region, Endpoint: sm.BaseEndpoint})
			require.NoError(t, err)
			assert.Equal(t, want.URI.String(), awsjson.New(tt.cfg, awsjson.SecretsManager).Endpoint(), "Secrets Manager")

			ds := dynamodbstreams.NewFromConfig(tt.cfg).Options()
			want, err = dynamodbstreams.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, dynamodbstreams.EndpointParameters{Region: &ds.Region, Endpoint: ds.BaseEndpoint})
			require.NoError(t, err)
			assert.Equal(t, want.URI.String(), awsjson.New(tt.cfg, awsjson.DynamoDBStreams).Endpoint(), "DynamoDB Streams")
		})
	}
}

// TestNoRegionNoEndpoint: a configuration without either makes calls fail, sending nothing.
func TestNoRegionNoEndpoint(t *testing.T) {
	err := awsjson.New(aws.Config{}, awsjson.SQS).Call(t.Context(), "SendMessage", nil, nil)
	assert.ErrorContains(t, err, "no region")
}
