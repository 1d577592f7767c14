package sdkcompat_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// The keys of the test: the caller's Plume key (plume-local's seeded dev key) and the
// deployment's provider keys, which only the fake model server may see. Bedrock has no key:
// requests are signed (SigV4) with the AWS credentials of plume-local's process, which also
// reach DynamoDB Local and the embedded S3, so the signature's access key id is awsKeyID.
const (
	plumeKey     = "plm_GatewaySdkcompat0000000000000000000000"
	openAIKey    = "sk-openai-deployment-key"
	anthropicKey = "sk-ant-deployment-key"
	awsKeyID     = "AKIDGATEWAYSDKCOMPAT"
	awsSecretKey = "gateway-sdkcompat-aws-secret"
)

// bedrockModel is the Bedrock model of the tests: a cross-region inference profile id, which
// llm.Route sends to Bedrock bare or behind "bedrock/".
const bedrockModel = "us.anthropic.claude-3-5-haiku-20241022-v1:0"

// dynamoEnv names DynamoDB Local's endpoint (shared/ddb/ddbtest.EnvURL).
const dynamoEnv = "PLUME_TEST_DYNAMODB_URL"

var (
	// plume is the running plume-local.
	plume *plumeLocal
	// fake is the model provider of every family; served records what it wrote and when.
	fake   *fakemodel.Server
	served *recorder
)

// family is a provider family the gateway serves: the model a client asks for, and what the
// fake model server's endpoint of that family must receive for it.
type family struct {
	name string
	// model is the id a client sends; bare is the provider's own name for it, what the
	// provider must receive; aliases are other spellings the gateway routes alike.
	model, bare string
	aliases     []string
	api         fakemodel.API
	// key is the deployment's key of the provider (Bedrock: the access key id of its AWS
	// credentials); credential reads the key a provider request carries, from the provider
	// API's own header.
	key        string
	credential func(http.Header) string
	// image reads the image of the first user message of a provider request body, in the
	// provider's own format, back as a data: URL.
	image func(t *testing.T, body []byte) string
	// tools reads how a provider request body offers its tools, in the provider's own format:
	// each tool's parameter schema by name, and whether the model may call several at once.
	tools func(t *testing.T, body []byte) (schemas map[string]map[string]any, parallel bool)
	// noSerialTools says why the provider's API cannot be asked for one tool call at a time,
	// "" when it can. parallel_tool_calls false must then be left out, not refused: the
	// provider's request is the same as without it.
	noSerialTools string
}

// families are the provider families under test.
var families = []family{
	{
		name: "OpenAI-compatible", model: "openai/gpt-4o-mini", bare: "gpt-4o-mini",
		aliases: []string{"gpt-4o-mini", "zeroeval/gpt-4o-mini", "plume/openai/gpt-4o-mini"},
		api:     fakemodel.OpenAI, key: openAIKey,
		credential: func(h http.Header) string {
			key, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
			return key
		},
		image: openAIImage, tools: openAITools,
	},
	{
		name: "Anthropic", model: "anthropic/claude-haiku-4-5", bare: "claude-haiku-4-5",
		aliases: []string{"claude-haiku-4-5", "zeroeval/claude-haiku-4-5", "plume/claude-haiku-4-5"},
		api:     fakemodel.Anthropic, key: anthropicKey,
		credential: func(h http.Header) string {
			if h.Get("Authorization") != "" {
				return "Authorization: " + h.Get("Authorization") // Anthropic takes x-api-key only
			}
			return h.Get("x-api-key")
		},
		image: anthropicImage, tools: anthropicTools,
	},
	{
		name: "Bedrock", model: "bedrock/" + bedrockModel, bare: bedrockModel,
		aliases: []string{bedrockModel, "zeroeval/" + bedrockModel, "plume/bedrock/" + bedrockModel},
		api:     fakemodel.Bedrock, key: awsKeyID, credential: bedrockCredential,
		image: bedrockImage, tools: bedrockTools,
		noSerialTools: "Converse's toolConfig has tools and toolChoice (auto, any, tool) only: nothing " +
			"in a Converse request says one call at a time (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolConfiguration.html)",
	},
}

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// runTests starts the fake model server and plume-local, runs the tests and stops both.
func runTests(m *testing.M) int {
	dynamo := os.Getenv(dynamoEnv)
	if dynamo == "" {
		fmt.Fprintf(os.Stderr, "%s is not set: run the tests with `make test`, which starts DynamoDB Local, or start it yourself (scripts/dynamodb-local.sh start) and export %s\n", dynamoEnv, dynamoEnv)
		return 1
	}
	dir, err := os.MkdirTemp("", "gateway-sdkcompat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	fake = fakemodel.New()
	served = &recorder{h: fake, changed: make(chan struct{})}
	provider := httptest.NewServer(served)
	defer provider.Close()

	p, err := startPlumeLocal(dir, dynamo, provider.URL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway sdkcompat:", err)
		return 1
	}
	plume = p
	code := m.Run()
	if err := p.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "gateway sdkcompat:", err)
		code = max(code, 1)
	}
	if code != 0 {
		p.printLog(os.Stderr)
	}
	return code
}

// plumeLocal is the plume-local process of the tests.
type plumeLocal struct {
	url     string // its base URL
	project string // the project of plumeKey
	table   string
	dynamo  string
	cmd     *exec.Cmd
	exited  chan error
	logPath string
}

// startPlumeLocal builds cmd/plume-local into dir, as the project builds it, and starts it on
// a free loopback port against DynamoDB Local at dynamo, in a table of its own, with the
// OpenAI, Anthropic and Bedrock providers at the fake model server at providerURL.
func startPlumeLocal(dir, dynamo, providerURL string) (*plumeLocal, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/plumehq/plume").Output()
	if err != nil {
		return nil, fmt.Errorf("find the plume module: %w", err)
	}
	bin := filepath.Join(dir, "plume-local")
	build := exec.Command("go", "build", "-o", bin, "./cmd/plume-local")
	build.Dir = strings.TrimSpace(string(root))
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/plume-local: %w\n%s", err, out)
	}

	p := &plumeLocal{
		project: "5b0e4c1a-7d2f-4e8b-9c3a-1f6d8e2b4a70",
		table:   "plume-gateway-sdkcompat-" + randomHex(6),
		dynamo:  dynamo,
		exited:  make(chan error, 1),
		logPath: filepath.Join(dir, "plume-local.log"),
	}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	p.cmd = exec.Command(bin)
	// Only what the test sets: the caller's environment must not add providers or endpoints.
	p.cmd.Env = []string{
		"PLUME_ADDR=127.0.0.1:0",
		"TABLE_NAME=" + p.table,
		"PLUME_DEV_PROJECT_ID=" + p.project,
		"PLUME_DEV_API_KEY=" + plumeKey,
		"AWS_ENDPOINT_URL_DYNAMODB=" + dynamo,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=" + awsKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsSecretKey,
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"OPENAI_BASE_URL=" + providerURL + "/v1",
		"OPENAI_API_KEY=" + openAIKey,
		"ANTHROPIC_BASE_URL=" + providerURL,
		"ANTHROPIC_API_KEY=" + anthropicKey,
		// Bedrock's endpoint only (AWS_ENDPOINT_URL would move S3 and DynamoDB too); its region
		// is AWS_REGION and its credentials the process's (llm.ConfigFromEnv, app.ModelsFromEnv).
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME=" + providerURL,
		// The Bedrock models GET /v1/models lists, as the template passes its ARNs.
		"PLUME_GATEWAY_BEDROCK_MODELS=arn:aws:bedrock:us-east-1:123456789012:inference-profile/" + bedrockModel,
	}
	stdout, stdoutW := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = stdoutW, logFile
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start plume-local: %w", err)
	}
	go func() {
		err := p.cmd.Wait()
		_ = stdoutW.Close()
		p.exited <- err
	}()

	ready := make(chan string, 1)
	go func() {
		running := regexp.MustCompile(`^Plume is running at (http://\S+)`)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := running.FindStringSubmatch(lines.Text()); m != nil {
				ready <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case p.url = <-ready:
		return p, nil
	case err := <-p.exited:
		p.exited <- err
		p.printLog(os.Stderr)
		return nil, fmt.Errorf("plume-local exited before it was ready: %v", err)
	case <-time.After(time.Minute):
		_ = p.stop()
		p.printLog(os.Stderr)
		return nil, errors.New("plume-local was not ready within a minute")
	}
}

// stop stops plume-local by its process id (SIGTERM, SIGKILL after 10 s) and deletes its table.
func (p *plumeLocal) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(p.dynamo),
		Credentials: credentials.NewStaticCredentialsProvider(awsKeyID, awsSecretKey, ""), // plume-local's
	})
	if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(p.table)}); err != nil {
		return fmt.Errorf("delete table %s: %w", p.table, err)
	}
	return nil
}

// printLog prints the end of plume-local's log.
func (p *plumeLocal) printLog(w io.Writer) {
	b, _ := os.ReadFile(p.logPath)
	fmt.Fprintf(w, "--- plume-local log (last 8 KiB of %d bytes):\n%s\n", len(b), b[max(0, len(b)-8<<10):])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// gatewayClient is openai-go pointed at plume-local's gateway with key ("" for none), without
// retries so that every request the tests make is one call.
func gatewayClient(key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(plume.url+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// useFake empties the fake's call log and the recorder and gives the fake rules, for one test.
func useFake(rules ...fakemodel.Rule) {
	fake.SetRules(rules...)
	fake.Reset()
	served.reset()
}

// onlyCall returns the one call the fake received since useFake, checked as every provider
// request of family f must be: its API, the provider's own model name and the deployment's
// key, and no trace of the caller's Plume key anywhere.
func onlyCall(t *testing.T, f family) fakemodel.Call {
	t.Helper()
	calls := fake.Calls()
	require.Len(t, calls, 1, "one provider call")
	c := calls[0]
	assertProviderCall(t, f, c)
	return c
}

func assertProviderCall(t *testing.T, f family, c fakemodel.Call) {
	t.Helper()
	assert.Equal(t, f.api, c.API, "the provider API")
	assert.Equal(t, http.StatusOK, c.Status, "the fake accepted the request: %s", c.Body)
	assert.Equal(t, f.bare, c.Model, "the provider's own model name")
	assert.Equal(t, f.key, f.credential(c.Header), "the deployment's provider key")
	for name, values := range c.Header {
		for _, v := range values {
			assert.NotContains(t, v, plumeKey, "header %s carries the Plume key", name)
		}
	}
	assert.NotContains(t, string(c.Body), plumeKey)
}

// openAIImage reads the image_url of the first user message of a Chat Completions request.
func openAIImage(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type     string `json:"type"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req), "%s", body)
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if m.Role == "user" && p.Type == "image_url" {
				return p.ImageURL.URL
			}
		}
	}
	return ""
}

// anthropicImage reads the base64 image block of the first user message of a Messages
// request, as a data: URL.
func anthropicImage(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type   string `json:"type"`
				Source struct {
					Type      string `json:"type"`
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req), "%s", body)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if m.Role == "user" && b.Type == "image" && b.Source.Type == "base64" {
				return "data:" + b.Source.MediaType + ";base64," + b.Source.Data
			}
		}
	}
	return ""
}

// openAITools reads the tools of a Chat Completions request: parallel_tool_calls is true unless
// it says false.
func openAITools(t *testing.T, body []byte) (map[string]map[string]any, bool) {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ParallelToolCalls *bool `json:"parallel_tool_calls"`
	}
	require.NoError(t, json.Unmarshal(body, &req), "%s", body)
	schemas := map[string]map[string]any{}
	for _, tool := range req.Tools {
		schemas[tool.Function.Name] = tool.Function.Parameters
	}
	return schemas, req.ParallelToolCalls == nil || *req.ParallelToolCalls
}

// anthropicTools reads the tools of a Messages request: tool_choice.disable_parallel_tool_use
// says whether the model may use several.
func anthropicTools(t *testing.T, body []byte) (map[string]map[string]any, bool) {
	t.Helper()
	var req struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
		ToolChoice *struct {
			DisableParallelToolUse bool `json:"disable_parallel_tool_use"`
		} `json:"tool_choice"`
	}
	require.NoError(t, json.Unmarshal(body, &req), "%s", body)
	schemas := map[string]map[string]any{}
	for _, tool := range req.Tools {
		schemas[tool.Name] = tool.InputSchema
	}
	return schemas, req.ToolChoice == nil || !req.ToolChoice.DisableParallelToolUse
}

// bedrockCredential reads the access key id a SigV4-signed request was signed with, from the
// Authorization header's "Credential=<key id>/<date>/<region>/<service>/aws4_request"
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-signing-elements.html); a
// header of another kind is returned whole, for the failure to show.
func bedrockCredential(h http.Header) string {
	auth := h.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "Authorization: " + auth
	}
	for _, field := range strings.Split(rest, ",") {
		if scope, ok := strings.CutPrefix(strings.TrimSpace(field), "Credential="); ok {
			keyID, _, _ := strings.Cut(scope, "/")
			return keyID
		}
	}
	return "Authorization: " + auth
}

// bedrockImage reads the image block of the first user message of a Converse request
// ({"image": {"format": "png", "source": {"bytes": <base64>}}}) as a data: URL.
func bedrockImage(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Image *struct {
					Format string `json:"format"`
					Source struct {
						Bytes string `json:"bytes"`
					} `json:"source"`
				} `json:"image"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req), "%s", body)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if m.Role == "user" && b.Image != nil {
				return "data:image/" + b.Image.Format + ";base64," + b.Image.Source.Bytes
			}
		}
	}
	return ""
}

// bedrockTools reads the tools of a Converse request: toolConfig.tools[].toolSpec's
// inputSchema.json by name. Converse has no setting for parallel tool use (noSerialTools):
// the model may always call several.
func bedrockTools(t *testing.T, body []byte) (map[string]map[string]any, bool) {
	t.Helper()
	var req struct {
		ToolConfig struct {
			Tools []struct {
				ToolSpec struct {
					Name        string `json:"name"`
					InputSchema struct {
						JSON map[string]any `json:"json"`
					} `json:"inputSchema"`
				} `json:"toolSpec"`
			} `json:"tools"`
		} `json:"toolConfig"`
	}
	require.NoError(t, json.Unmarshal(body, &req), "%s", body)
	schemas := map[string]map[string]any{}
	for _, tool := range req.ToolConfig.Tools {
		schemas[tool.ToolSpec.Name] = tool.ToolSpec.InputSchema.JSON
	}
	return schemas, true
}

// recorder serves the fake model server and records, for each request, when each streamed
// event was flushed and when the handler was done writing. It can hold the fake after an
// event until the test has seen it arrive (holdAfter).
type recorder struct {
	h http.Handler

	mu        sync.Mutex
	exchanges []exchange
	changed   chan struct{} // closed and replaced when an exchange is added
	// hold is the marker of the event after which the fake waits for release; "" for none.
	hold    string
	release <-chan struct{}
}

// exchange is what the fake wrote for one request.
type exchange struct {
	path string
	// events are the times the events were flushed: Server-Sent Events carrying data (data:
	// [DONE] left out: it carries no chunk), or the messages of an AWS event stream (Bedrock's
	// ConverseStream).
	events []time.Time
	// done is when the fake's handler returned: it had written everything.
	done time.Time
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ew := &eventWriter{ResponseWriter: w, rec: rec}
	rec.h.ServeHTTP(ew, r)
	done := time.Now()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.exchanges = append(rec.exchanges, exchange{path: r.URL.Path, events: ew.events, done: done})
	close(rec.changed)
	rec.changed = make(chan struct{})
}

// reset forgets the exchanges and any hold.
func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.exchanges, rec.hold, rec.release = nil, "", nil
}

// holdAfter makes the fake, once it has flushed the first event containing marker, wait until
// release is closed before it writes anything more (or 30 s, so that a relay that holds the
// event back fails the test instead of hanging it).
func (rec *recorder) holdAfter(marker string, release <-chan struct{}) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.hold, rec.release = marker, release
}

// held returns the release channel if event is the one to hold after, once.
func (rec *recorder) held(event []byte) <-chan struct{} {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.hold == "" || !bytes.Contains(event, []byte(rec.hold)) {
		return nil
	}
	rec.hold = ""
	return rec.release
}

// wait returns the first n exchanges since reset, once the fake is done with them.
func (rec *recorder) wait(t *testing.T, n int) []exchange {
	t.Helper()
	timeout := time.After(30 * time.Second) // a guard against a hang, not a timing assertion
	for {
		rec.mu.Lock()
		got, changed := rec.exchanges, rec.changed
		rec.mu.Unlock()
		if len(got) >= n {
			return got[:n]
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the fake model server finished %d requests, want %d", len(got), n)
		}
	}
}

// eventWriter notes the time of each flush that sends an event.
type eventWriter struct {
	http.ResponseWriter
	rec     *recorder
	pending []byte // written since the last flush
	events  []time.Time
}

func (e *eventWriter) Write(b []byte) (int, error) {
	e.pending = append(e.pending, b...)
	return e.ResponseWriter.Write(b)
}

func (e *eventWriter) Flush() {
	event := e.isEvent()
	_ = http.NewResponseController(e.ResponseWriter).Flush()
	if event {
		e.events = append(e.events, time.Now())
		if release := e.rec.held(e.pending); release != nil {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
	}
	e.pending = e.pending[:0]
}

// isEvent reports whether what was written since the last flush is an event: a message of an
// AWS event stream (the fake flushes each one), or a Server-Sent Event carrying data other
// than [DONE].
func (e *eventWriter) isEvent() bool {
	if e.Header().Get("Content-Type") == "application/vnd.amazon.eventstream" {
		return len(e.pending) > 0
	}
	return bytes.Contains(e.pending, []byte("data:")) && !bytes.Contains(e.pending, []byte("data: [DONE]"))
}

func (e *eventWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
