# shellcheck shell=bash
# Shared helpers of Plume's scripts: finding tools, fetching and starting DynamoDB Local (or
# moto), starting moto for the other AWS services tests use (SQS, Secrets Manager), waiting for
# ports, and stopping what was started by process id. Source it; it sets no options of its own.

PLUME_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PLUME_CACHE=${PLUME_CACHE:-$PLUME_ROOT/.cache}
DDB_LOCAL_VERSION=2.9.30 # amplify-dynamodb-simulator, which ships AWS's DynamoDBLocal.jar
DDB_LOCAL_DIR=$PLUME_CACHE/dynamodb-local/$DDB_LOCAL_VERSION
MCP_INSPECTOR_VERSION=2.12.0 # npm @modelcontextprotocol/inspector: its --cli mode drives the MCP tool server
MCP_INSPECTOR_DIR=$PLUME_CACHE/mcp-inspector/$MCP_INSPECTOR_VERSION
AXE_CORE_VERSION=4.14.1 # npm axe-core: the dashboard's accessibility test injects its axe.min.js
AXE_CORE_DIR=$PLUME_CACHE/axe-core/$AXE_CORE_VERSION
AXE_CORE_JS=$AXE_CORE_DIR/node_modules/axe-core/axe.min.js

log() { printf '%s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# need CMD PACKAGE: make sure CMD exists, installing the Debian PACKAGE when running as root.
# Go and cfn-lint have checks of their own (need_go, need_cfn_lint): apt cannot provide them.
need() {
  case $1 in
    go) need_go; return ;;
    cfn-lint) need_cfn_lint; return ;;
  esac
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing $2 (for $1) with apt-get"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null \
      || die "could not install $2; install it yourself (it provides $1)"
    command -v "$1" >/dev/null 2>&1 && return 0
  fi
  die "$1 is missing: install $2 (Debian/Ubuntu: apt-get install $2)"
}

# go_wanted prints the Go version of go.mod's go line (1.26.0).
go_wanted() { sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$PLUME_ROOT/go.mod"; }

# version_ge A B: whether version A is at least version B (1.26.8 >= 1.26.0).
version_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]; }

# need_go: make sure go is on PATH and at least go.mod's version. Never apt: Debian's golang
# package is far older (1.19 in bookworm); the message says how to install it from go.dev.
need_go() {
  local want have os arch
  want=$(go_wanted)
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case $(uname -m) in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=$(uname -m) ;;
  esac
  local how="install Go $want or later from https://go.dev/dl/ (not with apt: Debian's golang is too old), e.g.:
  curl -fsSL https://go.dev/dl/go$want.$os-$arch.tar.gz -o /tmp/go.tar.gz
  sudo rm -rf /usr/local/go && sudo tar -C /usr/local -xzf /tmp/go.tar.gz
  export PATH=/usr/local/go/bin:\$PATH"
  command -v go >/dev/null 2>&1 || die "go is missing; $how"
  # Run inside the module: a Go of 1.21 or later switches to the toolchain go.mod names
  # (GOTOOLCHAIN=auto), and that is the version that counts.
  have=$(cd "$PLUME_ROOT" && go version 2>/dev/null | awk '{print $3}') \
    || die "go version failed ($(command -v go)); $how"
  have=${have#go}
  [ -n "$have" ] || die "cannot tell the version of $(command -v go); $how"
  version_ge "$have" "$want" || die "go $have ($(command -v go)) is older than the go $want that go.mod needs; $how"
}

# need_cfn_lint: make sure cfn-lint is on PATH. It is a Python package (PyPI), not a Debian one.
need_cfn_lint() {
  command -v cfn-lint >/dev/null 2>&1 && return 0
  die "cfn-lint is missing; it comes from PyPI, not apt: pipx install cfn-lint
  (or python3 -m pip install --user cfn-lint, and put ~/.local/bin on PATH)"
}

# free_port prints a TCP port that is free on 127.0.0.1 right now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
    || die "python3 is needed to find a free port"
}

# wait_port PORT PID NAME LOG: wait up to 60 s for PORT to accept connections while PID lives.
wait_port() {
  local port=$1 pid=$2 name=$3 logfile=$4
  for _ in $(seq 1 600); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name exited before it was ready; its log:"; cat "$logfile" >&2 || true
      return 1
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  log "$name did not open port $port within 60 s; its log:"; cat "$logfile" >&2 || true
  return 1
}

# ddb_local_fetch downloads DynamoDB Local once into the ignored cache folder. Scripts started
# side by side on a fresh machine wait for one download (flock, where util-linux has it) rather
# than replace the folder under a DynamoDB Local another has just started.
ddb_local_fetch() {
  [ -f "$DDB_LOCAL_DIR/DynamoDBLocal.jar" ] && return 0
  if command -v flock >/dev/null 2>&1 && [ -z "${DDB_LOCAL_FETCH_LOCKED:-}" ]; then
    mkdir -p "$PLUME_CACHE"
    (
      flock 9
      DDB_LOCAL_FETCH_LOCKED=1 ddb_local_fetch
    ) 9>"$PLUME_CACHE/dynamodb-local.lock"
    return
  fi
  need java openjdk-17-jre-headless
  need npm npm
  log "downloading DynamoDB Local (npm package amplify-dynamodb-simulator@$DDB_LOCAL_VERSION) into $DDB_LOCAL_DIR"
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "amplify-dynamodb-simulator@$DDB_LOCAL_VERSION" >/dev/null) \
    || { rm -rf "$tmp"; die "npm pack amplify-dynamodb-simulator@$DDB_LOCAL_VERSION failed (is the npm registry reachable?)"; }
  tar -xzf "$tmp"/amplify-dynamodb-simulator-*.tgz -C "$tmp" package/emulator
  mkdir -p "$(dirname "$DDB_LOCAL_DIR")"
  rm -rf "$DDB_LOCAL_DIR"
  mv "$tmp/package/emulator" "$DDB_LOCAL_DIR"
  rm -rf "$tmp"
  [ -f "$DDB_LOCAL_DIR/DynamoDBLocal.jar" ] || die "DynamoDBLocal.jar is not in the downloaded package"
}

# need_node20: make sure node is at least 20. The MCP Inspector's package asks for 22 and
# installs on 20 with EBADENGINE warnings; its CLI works there. apt's nodejs may be older.
need_node20() {
  need node nodejs
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
    || die "node $(node --version) is too old for the MCP Inspector: install Node.js 20 or later (https://nodejs.org)"
}

# inspector_fetch installs the MCP Inspector once into the ignored cache folder. Its install
# script is skipped: it only installs the clients of a source checkout.
inspector_fetch() {
  [ -x "$MCP_INSPECTOR_DIR/node_modules/.bin/mcp-inspector" ] && return 0
  need_node20
  need npm npm
  log "installing the MCP Inspector (npm @modelcontextprotocol/inspector@$MCP_INSPECTOR_VERSION) into $MCP_INSPECTOR_DIR"
  local tmp; tmp=$(mktemp -d)
  npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "@modelcontextprotocol/inspector@$MCP_INSPECTOR_VERSION" >/dev/null \
    || { rm -rf "$tmp"; die "npm install @modelcontextprotocol/inspector@$MCP_INSPECTOR_VERSION failed (is the npm registry reachable?)"; }
  mkdir -p "$(dirname "$MCP_INSPECTOR_DIR")"
  rm -rf "$MCP_INSPECTOR_DIR"
  mv "$tmp" "$MCP_INSPECTOR_DIR"
}

# axe_fetch installs axe-core once into the ignored cache folder; the dashboard's accessibility
# test (functions/dashboard, TestEveryPageInBrowser) reads $AXE_CORE_JS from PLUME_TEST_AXE.
axe_fetch() {
  [ -f "$AXE_CORE_JS" ] && return 0
  need npm npm
  log "installing axe-core (npm axe-core@$AXE_CORE_VERSION) into $AXE_CORE_DIR"
  local tmp; tmp=$(mktemp -d)
  npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "axe-core@$AXE_CORE_VERSION" >/dev/null \
    || { rm -rf "$tmp"; die "npm install axe-core@$AXE_CORE_VERSION failed (is the npm registry reachable?)"; }
  [ -f "$tmp/node_modules/axe-core/axe.min.js" ] || { rm -rf "$tmp"; die "axe.min.js is not in npm's axe-core@$AXE_CORE_VERSION"; }
  mkdir -p "$(dirname "$AXE_CORE_DIR")"
  rm -rf "$AXE_CORE_DIR"
  mv "$tmp" "$AXE_CORE_DIR"
}

# inspector ARGS...: the MCP Inspector's CLI, never interactive (no OAuth prompt, no stdin),
# with a HOME of its own (it keeps a catalog of servers in ~/.mcp-inspector).
inspector() {
  mkdir -p "$MCP_INSPECTOR_DIR/home"
  HOME=$MCP_INSPECTOR_DIR/home CI=true "$MCP_INSPECTOR_DIR/node_modules/.bin/mcp-inspector" --cli "$@" </dev/null
}

# plume_local_start KEY PROJECT: build plume-local and start it on a free port against the
# DynamoDB emulator (EMULATOR_URL), in a table of its own, with the dev key KEY of project
# PROJECT. Sets PLUME_LOCAL_PID and PLUME_LOCAL_URL; plume_local_stop stops it.
plume_local_start() {
  local key=$1 project=$2 port logfile bin
  port=$(free_port)
  mkdir -p "$PLUME_CACHE/logs" "$PLUME_CACHE/bin"
  logfile=$PLUME_CACHE/logs/plume-local.log
  bin=$PLUME_CACHE/bin/plume-local
  (cd "$PLUME_ROOT" && go build -o "$bin" ./cmd/plume-local) || die "go build ./cmd/plume-local failed"
  AWS_ENDPOINT_URL_DYNAMODB=$EMULATOR_URL AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
    PLUME_ADDR=127.0.0.1:$port TABLE_NAME=plume-local-$$-$port PLUME_DEV_API_KEY=$key PLUME_DEV_PROJECT_ID=$project \
    "$bin" >"$logfile" 2>&1 &
  PLUME_LOCAL_PID=$!
  for _ in $(seq 1 600); do
    if ! kill -0 "$PLUME_LOCAL_PID" 2>/dev/null; then
      log "plume-local exited before it was ready; its log:"; cat "$logfile" >&2 || true
      PLUME_LOCAL_PID=; return 1
    fi
    grep -q '^Plume is running at' "$logfile" && break
    sleep 0.1
  done
  grep -q '^Plume is running at' "$logfile" || { log "plume-local was not ready within 60 s; its log:"; cat "$logfile" >&2; return 1; }
  PLUME_LOCAL_URL=http://127.0.0.1:$port
  log "plume-local is serving $PLUME_LOCAL_URL (pid $PLUME_LOCAL_PID, log $logfile)"
}

# plume_local_stop stops the plume-local plume_local_start started, by its process id.
plume_local_stop() {
  stop_pid "${PLUME_LOCAL_PID:-}"
  PLUME_LOCAL_PID=
}

# emulator_start: start the DynamoDB emulator chosen by EMULATOR (dynamodb-local, the default,
# or moto) on a free port (PLUME_DYNAMODB_PORT to choose it). Sets EMULATOR_PID and
# EMULATOR_URL. DynamoDB Local runs with DDB_LOCAL_HEAP (1g) of Java heap, in memory unless
# DDB_LOCAL_DB_PATH names a folder to keep its database in, and logs to
# DDB_LOCAL_LOG_NAME (dynamodb-local).log under .cache/logs: make scale starts one of its own
# beside make test's with a larger heap. It keeps one database for every client (-sharedDb)
# unless DDB_LOCAL_SHARED_DB=0: then one per access key, as make test, bench and fuzz start it,
# so that each test process (blobtest.AccessKey) has its own tables and change streams.
emulator_start() {
  local port logfile storage shared
  port=${PLUME_DYNAMODB_PORT:-$(free_port)}
  mkdir -p "$PLUME_CACHE/logs"
  case "${EMULATOR:-dynamodb-local}" in
    dynamodb-local)
      ddb_local_fetch
      need java openjdk-17-jre-headless
      logfile=$PLUME_CACHE/logs/${DDB_LOCAL_LOG_NAME:-dynamodb-local}.log
      storage=(-inMemory)
      if [ -n "${DDB_LOCAL_DB_PATH:-}" ]; then
        mkdir -p "$DDB_LOCAL_DB_PATH"
        storage=(-dbPath "$(cd "$DDB_LOCAL_DB_PATH" && pwd)")
      fi
      shared=(-sharedDb)
      [ "${DDB_LOCAL_SHARED_DB:-1}" = 0 ] && shared=()
      (cd "$DDB_LOCAL_DIR" && exec java "-Xmx${DDB_LOCAL_HEAP:-1g}" -Djava.library.path=./DynamoDBLocal_lib \
        -jar DynamoDBLocal.jar "${storage[@]}" "${shared[@]}" -port "$port") >"$logfile" 2>&1 &
      EMULATOR_PID=$!
      ;;
    moto)
      python3 -c 'import moto.server' 2>/dev/null || die "EMULATOR=moto needs the Python package moto[server]"
      logfile=$PLUME_CACHE/logs/moto.log
      python3 -m moto.server -H 127.0.0.1 -p "$port" >"$logfile" 2>&1 &
      EMULATOR_PID=$!
      ;;
    *) die "EMULATOR must be dynamodb-local or moto, not ${EMULATOR}" ;;
  esac
  wait_port "$port" "$EMULATOR_PID" "${EMULATOR:-dynamodb-local}" "$logfile" || { emulator_stop; exit 1; }
  EMULATOR_URL=http://127.0.0.1:$port
  log "${EMULATOR:-dynamodb-local} is listening on $EMULATOR_URL (pid $EMULATOR_PID, log $logfile)"
}

# need_moto: make sure moto's server can run. It is a Python package (PyPI), not a Debian one.
need_moto() {
  python3 -c 'import moto.server' 2>/dev/null && return 0
  die "moto's server is missing (the tests use it for SQS and Secrets Manager); it comes from PyPI:
  python3 -m pip install --user 'moto[server]'  (the scripts run it as python3 -m moto.server)"
}

# aws_emulator_start: start moto's server on a free port for the AWS services tests use beside
# DynamoDB (SQS, Secrets Manager). Sets AWS_EMULATOR_PID and AWS_EMULATOR_URL; emulator_stop
# stops it.
aws_emulator_start() {
  local port logfile
  need_moto
  port=$(free_port)
  mkdir -p "$PLUME_CACHE/logs"
  logfile=$PLUME_CACHE/logs/moto-aws.log
  python3 -m moto.server -H 127.0.0.1 -p "$port" >"$logfile" 2>&1 &
  AWS_EMULATOR_PID=$!
  wait_port "$port" "$AWS_EMULATOR_PID" moto "$logfile" || { emulator_stop; exit 1; }
  AWS_EMULATOR_URL=http://127.0.0.1:$port
  log "moto (SQS, Secrets Manager) is listening on $AWS_EMULATOR_URL (pid $AWS_EMULATOR_PID, log $logfile)"
}

# stop_pid PID: stop a process this script started, by its id, and wait for it: SIGTERM, then
# SIGKILL after 5 s.
stop_pid() {
  local pid=$1
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# emulator_stop stops the emulators that were started (emulator_start, aws_emulator_start) by
# their process ids and waits for them.
emulator_stop() {
  stop_pid "${EMULATOR_PID:-}"
  EMULATOR_PID=
  stop_pid "${AWS_EMULATOR_PID:-}"
  AWS_EMULATOR_PID=
}
