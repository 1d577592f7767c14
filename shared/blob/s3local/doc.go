// Package s3local runs an S3 server in the process, for local runs (cmd/plume-local) and tests:
// github.com/rclone/gofakes3 with in-memory storage, on a real TCP listener, with AWS
// Signature Version 4 checking on.
//
// Every request must be signed with the one key pair the server was started with, so a test
// that passes against it exercises real signing. gofakes3 (v0.0.12) refuses, as S3 does:
//   - unsigned requests, unknown access keys and wrong signatures (403);
//   - presigned URLs whose signature, path, query (X-Amz-Expires, X-Amz-Date ...), method or
//     signed headers (such as a signed Content-Type) differ from what was signed, or that carry
//     an unsigned x-amz-* header (403);
//   - presigned URLs used after X-Amz-Date + X-Amz-Expires, more than 15 minutes before
//     X-Amz-Date, or with X-Amz-Expires outside 1 to 604800 seconds (403);
//   - header-signed requests whose X-Amz-Date is more than 15 minutes from the server's clock;
//   - bodies that do not match a Content-MD5 or x-amz-checksum-* header (the AWS SDK sends a
//     CRC32 checksum with every PutObject by default).
//
// It does not check: that the body of a header-signed request matches the signed
// X-Amz-Content-Sha256 (only the checksum headers above protect the body); the region and date
// of the credential scope, which only feed the signing key; bucket policies and ACLs (a valid
// signature may do anything). Its signature checks use the real clock: gofakes3's
// WithTimeSource does not reach them, so tests of expiry wait or sign with a shifted clock.
//
// Unlike S3, it answers every request with X-Content-Type-Options: nosniff: where Plume serves
// the bytes itself (plume-local), it says what S3 cannot.
//
// Point the AWS SDK at URL() through its own configuration (AWS_ENDPOINT_URL_S3 or
// aws.Config.BaseEndpoint) with path-style addressing, as blob.NewClient does.
package s3local
