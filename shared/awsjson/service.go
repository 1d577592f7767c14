package awsjson

// Service is an AWS service that speaks AWS JSON.
type Service struct {
	// ID is the service's SDK id: AWS_ENDPOINT_URL_<ID> (in capitals, spaces as
	// underscores) sets its endpoint.
	ID string
	// EndpointPrefix is the first label of its regional endpoint's host.
	EndpointPrefix string
	// SigningName is its name in a Signature Version 4 scope.
	SigningName string
	// TargetPrefix prefixes an operation's name in X-Amz-Target.
	TargetPrefix string
	// Version is the protocol's version, "1.0" or "1.1": Content-Type
	// application/x-amz-json-<Version>.
	Version string
}

// The services Plume calls.
var (
	// SQS speaks AWS JSON 1.0 since November 2023 (before: the query protocol).
	SQS = Service{ID: "SQS", EndpointPrefix: "sqs", SigningName: "sqs", TargetPrefix: "AmazonSQS", Version: "1.0"}
	// EventBridge is the service of event buses (its older name: CloudWatch Events).
	EventBridge = Service{ID: "EventBridge", EndpointPrefix: "events", SigningName: "events", TargetPrefix: "AWSEvents", Version: "1.1"}
	// SecretsManager holds the provider keys of a deployment (shared/config).
	SecretsManager = Service{ID: "Secrets Manager", EndpointPrefix: "secretsmanager", SigningName: "secretsmanager", TargetPrefix: "secretsmanager", Version: "1.1"}
	// DynamoDBStreams reads a table's change stream (plume-local's and the tests' poller:
	// deployed, Lambda's event source mapping reads it).
	DynamoDBStreams = Service{ID: "DynamoDB Streams", EndpointPrefix: "streams.dynamodb", SigningName: "dynamodb", TargetPrefix: "DynamoDBStreams_20120810", Version: "1.0"}
)
