package faultproxy

import (
	"net/http"
	"strings"
)

// Op names the operation of r, the name that rules match and Count and Log report.
//
// A DynamoDB request is one with an X-Amz-Target header ("DynamoDB_20120810.PutItem"); it is
// named by the operation after the last dot: "PutItem", "TransactWriteItems", "UpdateItem",
// "Query", "BatchGetItem" ...
//
// Any other request is taken for S3 with path-style addressing (http://host/bucket/key, as
// blob.NewClient addresses an emulator) and named by its method and the kind of resource its
// path names: "GET service" (ListBuckets), "PUT bucket" (CreateBucket), "HEAD bucket",
// "GET bucket" (ListObjectsV2), "POST bucket" (DeleteObjects), "PUT object", "GET object",
// "HEAD object", "DELETE object", "POST object" (multipart uploads). Sub-resources in the
// query (?uploads, ?tagging, ?partNumber= ...) and presigning do not change the name.
func Op(r *http.Request) string {
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		return target[strings.LastIndexByte(target, '.')+1:]
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	kind := "object"
	switch path := strings.TrimPrefix(r.URL.Path, "/"); {
	case path == "":
		kind = "service"
	default:
		if _, key, _ := strings.Cut(path, "/"); key == "" {
			kind = "bucket"
		}
	}
	return method + " " + kind
}
