// Package infra holds the single source of truth for Plume's storage schema: the DynamoDB
// table (keys, global secondary indexes, TTL attribute) and the helpers that create it and the
// bucket for local runs, tests and the operator CLI. template.yaml declares the same table for
// AWS; a test in this package proves the two agree.
package infra
