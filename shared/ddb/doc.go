// Package ddb implements Plume's stores on one DynamoDB table (schema: package infra).
//
// All key builders are in keys.go; item structs are unexported and separate from the domain
// types they map to. Every key of tenant data starts with "P#<project_id>#", and every method
// takes the project id from the caller's credentials, so no request can reach another
// project's items. The one exception is the API key lookup item, keyed by the key's SHA-256.
//
// Nothing the functions call scans the table; every read is a GetItem, BatchGetItem or Query on
// a key. The one Scan is an operator's: ProjectDeletionStore.Scan, for deleting a project
// (shared/projectdelete, plume admin delete-project), whose project has items no index lists.
package ddb
