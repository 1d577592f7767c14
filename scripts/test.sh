#!/usr/bin/env bash
# make test: every check of the project, on a fresh machine or a developer's. It starts DynamoDB
# Local (downloading it once) and moto (SQS and Secrets Manager), runs vet, formatting, the Go
# tests with the race detector (store, handler, template, emulator, headless-Chromium, with
# axe-core installed once from npm for the dashboard's accessibility test, and end-to-end
# tests), cfn-lint, a build of every Lambda bootstrap, and the MCP Inspector's CLI against
# plume-local's tool server; it stops what it started by process id, whatever happens.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"

need go
need python3 python3
need cfn-lint
need_moto
# The feedback-link page is tested in headless Chromium (functions/feedback).
need chromium chromium

cleanup() {
  plume_local_stop
  emulator_stop
}
trap cleanup EXIT INT TERM

log "== gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"
go vet ./...

log "== cfn-lint template.yaml"
cfn-lint template.yaml

log "== Lambda bootstraps (linux/arm64, as deployed)"
make --no-print-directory build

# A database per access key: each test process has its own (blobtest.AccessKey). Every test's
# table has its stream, read by the API under test (internal/apitest), and the test packages run
# side by side: 3 GB of heap (with the default 1 GB, a run whose tests applied their whole
# stream saw DynamoDB Local answer single Queries in 20 s late in the run).
DDB_LOCAL_SHARED_DB=0 DDB_LOCAL_HEAP=${DDB_LOCAL_HEAP:-3g} emulator_start
export PLUME_TEST_DYNAMODB_URL=$EMULATOR_URL
aws_emulator_start
export PLUME_TEST_AWS_URL=$AWS_EMULATOR_URL
# axe-core (npm, installed once into .cache) for the dashboard's accessibility test.
axe_fetch
export PLUME_TEST_AXE=$AXE_CORE_JS

log "== go test -race"
# internal/stack, the longest package, takes about 3 minutes on a quiet machine and 20 under
# -race at load 50: the timeout is for a hung test, not a slow machine.
go test -race -count=1 -timeout 45m ${GOTESTFLAGS:-} ./...

# The fake model server through the official OpenAI and Anthropic Go SDKs: a module of its own,
# so that the SDKs stay out of the project's go.mod (shared/llm/fakemodel/sdkcompat).
log "== go test: fake model server through the provider SDKs"
(cd shared/llm/fakemodel/sdkcompat && go vet ./... && go test -race -count=1 ${GOTESTFLAGS:-} ./...)

# The client's Transport under the official OpenAI Go SDK, against the whole API: a module of
# its own for the same reason (client/sdkcompat).
log "== go test: the client's Transport through openai-go"
(cd client/sdkcompat && go vet ./... && go test -race -count=1 ${GOTESTFLAGS:-} ./...)

# The model gateway under the official OpenAI Go SDK: the real plume-local (built by the tests)
# against DynamoDB Local, its providers a fake model server, every provider family the gateway
# serves, streamed and not (functions/gateway/sdkcompat, a module of its own for the same reason).
log "== go test: the model gateway through openai-go"
(cd functions/gateway/sdkcompat && go vet ./... && go test -race -count=1 ${GOTESTFLAGS:-} ./...)

# The MCP tool server under a real MCP client, the MCP Inspector's CLI (npm, installed once into
# .cache), against plume-local over Streamable HTTP: tools/list, a read tool, a write tool
# refused without confirm (and nothing written), and a request with an unknown key.
log "== MCP Inspector CLI against plume-local's /mcp"
inspector_fetch
mcp_project=7c1e9a52-3d4b-4f6e-9a8b-2c5d7e0f1a3b
mcp_key=plm_McpInspectorCheck0000000000000000000000
plume_local_start "$mcp_key" "$mcp_project"
mcp_out=$PLUME_CACHE/logs/mcp-inspector
mkdir -p "$mcp_out"

# mcp NAME KEY ARGS...: one inspector call with KEY, its JSON answer in $mcp_out/NAME.json and
# its diagnostics in NAME.err; mcp_rc is its exit status.
mcp() {
  local name=$1 key=$2
  shift 2
  mcp_rc=0
  inspector "$PLUME_LOCAL_URL/mcp" --transport http --stored-auth-only --format json \
    --header "Authorization: Bearer $key" "$@" >"$mcp_out/$name.json" 2>"$mcp_out/$name.err" || mcp_rc=$?
}

# mcp_expect NAME RC CHECK: the call NAME exited with RC and its result r passes CHECK, a Python
# expression.
mcp_expect() {
  local name=$1 rc=$2 check=$3
  [ "$mcp_rc" = "$rc" ] || die "MCP Inspector $name: exit status $mcp_rc, want $rc; stdout: $(head -c 2000 "$mcp_out/$name.json"); stderr: $(head -c 2000 "$mcp_out/$name.err")"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["result"]; sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' \
    "$mcp_out/$name.json" "$check" || die "MCP Inspector $name: the answer fails $check: $(head -c 2000 "$mcp_out/$name.json")"
}

# rest METHOD PATH [BODY]: plume-local's REST API with the same key; prints the JSON answer.
rest() {
  python3 -c 'import json, sys, urllib.request as u
req = u.Request(sys.argv[1] + sys.argv[3], method=sys.argv[2], data=sys.argv[5].encode() if len(sys.argv) > 5 else None,
    headers={"Authorization": "Bearer " + sys.argv[4], "Content-Type": "application/json"})
print(u.urlopen(req, timeout=30).read().decode())' "$PLUME_LOCAL_URL" "$1" "$2" "$mcp_key" "${@:3}"
}

rest POST /v1/tasks/support-bot/prompt/versions/ensure '{"content": "You help with {{product}}."}' >/dev/null

mcp tools-list "$mcp_key" --method tools/list
mcp_expect tools-list 0 '{t["name"]: t["annotations"].get("readOnlyHint") for t in r["tools"]}.get("list-prompts") is True and
  {t["name"]: t["annotations"].get("destructiveHint") for t in r["tools"]}.get("create-judge") is True'

mcp list-prompts "$mcp_key" --method tools/call --tool-name list-prompts
mcp_expect list-prompts 0 'not r.get("isError") and [p["slug"] for p in r["structuredContent"]["prompts"]] == ["support-bot"]'

# Exit status 5: the tool answered isError (the inspector's tool_is_error).
mcp create-judge "$mcp_key" --method tools/call --tool-name create-judge --tool-arg name=x --tool-arg template=y
mcp_expect create-judge 5 'r["isError"] is True and "confirm" in r["content"][0]["text"]'
judges=$(rest GET "/projects/$mcp_project/judges")
python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1])["judges"] != [])' "$judges" \
  || die "MCP Inspector create-judge: refused without confirm, yet the project has judges: $judges"

# Exit status 3: refused before any tool runs (the inspector's auth_required).
mcp unknown-key plm_NoSuchKey00000000000000000000000000000 --method tools/list
[ "$mcp_rc" = 3 ] && grep -q unauthenticated "$mcp_out/unknown-key.err" \
  || die "MCP Inspector with an unknown key: exit status $mcp_rc, want 3 and unauthenticated; stderr: $(head -c 2000 "$mcp_out/unknown-key.err")"
log "MCP Inspector: tools/list, list-prompts, create-judge refused without confirm, unknown key refused"

# The dashboard as plume-local (make dev) serves it: sign in with the key through the form, then
# a page that reads through the REST areas mounted in the dashboard's process.
python3 - "$PLUME_LOCAL_URL" "$mcp_key" <<'PY' || die "the dashboard in plume-local: see above"
import http.cookiejar, re, sys, urllib.parse, urllib.request as u
base, key = sys.argv[1], sys.argv[2]
class Keep(u.HTTPRedirectHandler):
    def redirect_request(self, *a): return None
web = u.build_opener(u.HTTPCookieProcessor(http.cookiejar.CookieJar()), Keep())
def csrf(html): return re.search(r'name="csrf" value="([^"]+)"', html).group(1)
login = web.open(base + "/ui/login", timeout=30).read().decode()
form = urllib.parse.urlencode({"api_key": key, "csrf": csrf(login)}).encode()
try:
    web.open(u.Request(base + "/ui/login", data=form), timeout=30)
    sys.exit("sign-in did not redirect")
except u.HTTPError as e:
    if e.code != 303: sys.exit(f"sign-in answered {e.code}: {e.read()[:500]!r}")
page = web.open(base + "/ui/prompts/support-bot", timeout=30).read().decode()
if "<h1" not in page or "support-bot" not in page: sys.exit("the prompt page: " + page[:500])
PY
plume_local_stop
log "dashboard in plume-local: sign in, a prompt's page"
