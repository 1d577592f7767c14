package ddbtest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCounterLeavesRetriesOut: a request the SDK sends twice (DynamoDB answered the first
// attempt with a 500) is one request, and one retry.
func TestCounterLeavesRetriesOut(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if attempts.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"try again"}`))
			return
		}
		_, _ = w.Write([]byte(`{"Count":0,"Items":[],"ScannedCount":0}`))
	}))
	defer srv.Close()
	counter := &Counter{}
	client := dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String(srv.URL),
		Credentials:                     credentials.NewStaticCredentialsProvider("local", "local", ""),
		DisableValidateResponseChecksum: true,
		RetryMaxAttempts:                3,
		APIOptions:                      counter.apiOptions(),
	})

	_, err := client.Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("PK = :p")})
	require.NoError(t, err)
	assert.EqualValues(t, 2, attempts.Load(), "the server saw the retry")
	assert.Equal(t, 1, counter.Total())
	assert.Equal(t, map[string]int{"Query": 1}, counter.Counts())
	assert.Equal(t, 1, counter.Retries())
	assert.Equal(t, "Query=1 (retries 1)", counter.String())

	counter.Reset()
	assert.Zero(t, counter.Retries())
	assert.Zero(t, counter.Total())
}
