package ddb

import "fmt"

// Partition and sort keys of every item type. The layout of a prompt partition, in sort-key
// order, is: HASH#<sha256> (hash guards) < PROMPT (head: counter and latest pointer) <
// TAG#<tag> (tags) < V#<0000000001> (versions); Tags reads the middle range in one Query and
// LatestVersion reads the last V# item in one Query.
const (
	skProject        = "PROJECT"
	skAPIKey         = "APIKEY"
	skPrompt         = "PROMPT"
	skVersionPointer = "PV"
	prefixKey        = "KEY#"
	prefixVersion    = "V#"
	prefixTag        = "TAG#"
	// tagRangeEnd sorts after every "TAG#..." key: '$' follows '#'.
	tagRangeEnd = "TAG$"

	gsiProjects = "PROJECTS"
)

func projectPK(projectID string) string { return "P#" + projectID }

func keySK(keyID string) string { return prefixKey + keyID }

func apiKeyPK(hash string) string { return "APIKEY#" + hash }

func promptPK(projectID, slug string) string { return "P#" + projectID + "#PROMPT#" + slug }

func promptsGSI1PK(projectID string) string { return "P#" + projectID + "#PROMPTS" }

// versionSK zero-pads the number so that sort-key order is version order.
func versionSK(n int) string { return fmt.Sprintf("%s%010d", prefixVersion, n) }

func hashSK(hash string) string { return "HASH#" + hash }

func tagSK(tag string) string { return prefixTag + tag }

func versionPointerPK(projectID, versionID string) string {
	return "P#" + projectID + "#PV#" + versionID
}
