// Package blob is Plume's store on its one S3 bucket: span batches (newline-delimited JSON
// under spans/project=<id>/date=<yyyy-mm-dd>/hour=<hh>/), extracted attachments and raw
// payloads.
//
// Callers build object keys; Store checks only that a key is usable (non-empty, not starting
// with "/", at most 1024 bytes). Every key of tenant data must contain the project taken from
// the caller's credentials, as in shared/ddb.
//
// Objects are written from a buffer, never from a stream: a non-seekable body cannot be signed
// over plain HTTP, which is how local emulators are reached. Reads are whole objects or byte
// ranges (a span is read with one ranged GET at the offset and length its index item records).
// Browsers and other outside clients get presigned URLs with a short expiry instead of the
// bytes.
//
// The endpoint comes only from the SDK's own configuration (AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL), so the same code runs against AWS, LocalStack, moto or the embedded
// server of package s3local.
//
// IAM: Put needs s3:PutObject; Get and GetRange need s3:GetObject, and s3:ListBucket too, or S3
// answers a missing key with 403 AccessDenied instead of 404 NoSuchKey and Get cannot report
// errs.NotFound; Sizes needs s3:ListBucket, which a policy can restrict to a prefix with an
// s3:prefix condition; EnsureBucket needs s3:ListBucket and s3:CreateBucket (deployed
// functions do not call it: SAM creates the bucket). PresignGet and PresignPut send nothing,
// but their URLs need s3:GetObject and s3:PutObject. A presigned URL carries the rights of the
// credentials that signed it and lasts no longer than them: URLs signed with a Lambda role's
// session credentials stop working when that session expires, whatever their TTL.
package blob
