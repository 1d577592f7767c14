// Package awsjson sends one operation of an AWS service that speaks the AWS JSON protocol
// (1.0: SQS; 1.1: EventBridge, Secrets Manager): a POST of the operation's input as JSON,
// named by X-Amz-Target, signed with Signature Version 4, its answer or its error decoded.
//
// Plume calls four operations of these three services (EventBridge's PutEvents, SQS's
// SendMessage, ReceiveMessage and DeleteMessage, Secrets Manager's GetSecretValue). The AWS
// SDK's service clients of them cost every function's bootstrap about 0.9 MB and its init
// about 1 ms (each builds every operation's schema and its endpoint tables at package init),
// whether the function calls them or not, since the composition root links them all
// (docs/performance.md). This package is what those clients do for Plume's calls, with the
// parts of the SDK that DynamoDB and S3 link anyway: the v4 signer, the credentials and the
// HTTP client of the function's aws.Config. Each caller declares the typed input and output of
// the operations it calls, in its own package.
//
// What it keeps of the SDK's behaviour:
//   - the endpoint: AWS_ENDPOINT_URL_<SERVICE> (or a shared config file's services section,
//     whatever the configuration's sources answer), else aws.Config.BaseEndpoint
//     (AWS_ENDPOINT_URL), else the region's endpoint, https://<prefix>.<region>.amazonaws.com;
//     AWS_IGNORE_CONFIGURED_ENDPOINT_URLS turns the configured ones off;
//   - errors: the answer's __type and message decoded into an *Error, which errors.Is matches
//     to ErrThrottling and ErrNotFound, and which is a smithy.APIError;
//   - retries as the SDK's standard retryer: at most 3 attempts (aws.Config.RetryMaxAttempts
//     when set), again only after a transport error, a 5xx, a 429 or a throttling or timeout
//     error code, after a wait drawn at random below 50 ms (1 s after throttling) doubled
//     each retry, at most 20 s; never after any other 4xx. The context bounds every attempt
//     and every wait.
//
// What it leaves out: FIPS and dual-stack endpoints, the SDK's retry token bucket and clock
// skew correction, and any aws.Config.Retryer (Plume sets none).
package awsjson
