// Package faultproxy makes DynamoDB and S3 fail on purpose in tests: a reverse proxy on the
// loopback interface, put between an AWS SDK client and DynamoDB Local or the embedded S3
// server (shared/blob/s3local), that throttles, fails, delays or drops the requests a test
// chooses and forwards all others unchanged.
//
// It exists for the failures a store must survive and an emulator never produces: a throttle
// on the third write of a batch, a transaction that fails once, and above all a write that
// takes effect although its client never hears back (DropAfterForward). The AWS SDK retries
// such a write, and the retry meets the first attempt's effect; only a test that makes it
// happen shows whether a store is idempotent.
//
// An end-to-end test points its clients at the proxy's URL instead of the emulator's, and
// adds rules that name operations as Op does ("PutItem", "PUT object"):
//
//	client, _, table := ddbtest.NewTable(t) // created directly, without faults
//	p := faultproxy.New(t, ddbtest.Endpoint(t))
//	viaProxy := dynamodb.New(client.Options(), func(o *dynamodb.Options) {
//		o.BaseEndpoint = aws.String(p.URL())
//	})
//	store := ddb.NewPromptStore(ddb.NewTable(viaProxy, table))
//
//	p.Fail(faultproxy.Rule{Op: "TransactWriteItems", Fault: faultproxy.DropAfterForward})
//	got, created, err := store.EnsureVersion(ctx, v) // written, then retried by the SDK
//	// ... the version is stored once, and err, created and got say so.
//	assert.Equal(t, 2, p.Count("TransactWriteItems"))
//
// S3 works the same way: start the server (blobtest.New returns its URL), start a proxy to it
// and give the S3 client p.URL() as aws.Config.BaseEndpoint, with path-style addressing.
//
// Requests keep their Host header on the way through. The AWS SDK always signs Host (AWS
// Signature Version 4) with the endpoint it was given, here the proxy's, and the embedded S3
// server checks signatures: a proxy that rewrote Host to the target's would get
// SignatureDoesNotMatch for every request. DynamoDB Local checks only that a request carries
// credentials, not its signature.
//
// Rules, counts and the log start empty, and Reset empties them, so a test sets its data up
// through the proxy, calls Reset, then adds its rules. Keep the clients' retries small in tests
// (a retry.Standard with two attempts and a backoff of a millisecond): the SDK's own backoff
// after a throttle is up to 20 seconds.
package faultproxy
