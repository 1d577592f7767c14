package faultproxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/internal/faultproxy"
)

func TestOp(t *testing.T) {
	tests := []struct {
		name, method, target, xAmzTarget string
		want                             string
	}{
		{name: "DynamoDB PutItem", method: "POST", target: "/", xAmzTarget: "DynamoDB_20120810.PutItem", want: "PutItem"},
		{name: "DynamoDB TransactWriteItems", method: "POST", target: "/", xAmzTarget: "DynamoDB_20120810.TransactWriteItems", want: "TransactWriteItems"},
		{name: "target without a prefix", method: "POST", target: "/", xAmzTarget: "Query", want: "Query"},
		{name: "ListBuckets", method: "GET", target: "/", want: "GET service"},
		{name: "CreateBucket", method: "PUT", target: "/bucket", want: "PUT bucket"},
		{name: "CreateBucket with a slash", method: "PUT", target: "/bucket/", want: "PUT bucket"},
		{name: "HeadBucket", method: "HEAD", target: "/bucket", want: "HEAD bucket"},
		{name: "ListObjectsV2", method: "GET", target: "/bucket?list-type=2&prefix=a%2F", want: "GET bucket"},
		{name: "DeleteObjects", method: "POST", target: "/bucket?delete", want: "POST bucket"},
		{name: "PutObject", method: "PUT", target: "/bucket/key", want: "PUT object"},
		{name: "PutObject with a deep escaped key", method: "PUT", target: "/bucket/a/b%20c/d%2Fe", want: "PUT object"},
		{name: "GetObject presigned", method: "GET", target: "/bucket/key?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=60", want: "GET object"},
		{name: "HeadObject", method: "HEAD", target: "/bucket/key", want: "HEAD object"},
		{name: "DeleteObject", method: "DELETE", target: "/bucket/key", want: "DELETE object"},
		{name: "CreateMultipartUpload", method: "POST", target: "/bucket/key?uploads", want: "POST object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, http.NoBody)
			if tt.xAmzTarget != "" {
				r.Header.Set("X-Amz-Target", tt.xAmzTarget)
			}
			assert.Equal(t, tt.want, faultproxy.Op(r))
		})
	}
}
