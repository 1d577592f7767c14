# shellcheck shell=bash
# Shared helpers of Plume's scripts: finding tools, fetching and starting DynamoDB Local (or
# moto), waiting for ports, and stopping what was started by process id. Source it; it sets no
# options of its own.

PLUME_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PLUME_CACHE=${PLUME_CACHE:-$PLUME_ROOT/.cache}
DDB_LOCAL_VERSION=2.9.30 # amplify-dynamodb-simulator, which ships AWS's DynamoDBLocal.jar
DDB_LOCAL_DIR=$PLUME_CACHE/dynamodb-local/$DDB_LOCAL_VERSION

log() { printf '%s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# need CMD PACKAGE: make sure CMD exists, installing the Debian PACKAGE when running as root.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing $2 (for $1) with apt-get"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null \
      || die "could not install $2; install it yourself (it provides $1)"
    command -v "$1" >/dev/null 2>&1 && return 0
  fi
  die "$1 is missing: install $2 (Debian/Ubuntu: apt-get install $2)"
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

# ddb_local_fetch downloads DynamoDB Local once into the ignored cache folder.
ddb_local_fetch() {
  [ -f "$DDB_LOCAL_DIR/DynamoDBLocal.jar" ] && return 0
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

# emulator_start: start the DynamoDB emulator chosen by EMULATOR (dynamodb-local, the default,
# or moto) on a free port. Sets EMULATOR_PID and EMULATOR_URL.
emulator_start() {
  local port logfile
  port=${PLUME_DYNAMODB_PORT:-$(free_port)}
  mkdir -p "$PLUME_CACHE/logs"
  case "${EMULATOR:-dynamodb-local}" in
    dynamodb-local)
      ddb_local_fetch
      need java openjdk-17-jre-headless
      logfile=$PLUME_CACHE/logs/dynamodb-local.log
      (cd "$DDB_LOCAL_DIR" && exec java -Xmx1g -Djava.library.path=./DynamoDBLocal_lib \
        -jar DynamoDBLocal.jar -inMemory -sharedDb -port "$port") >"$logfile" 2>&1 &
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

# emulator_stop stops the emulator by its process id and waits for it.
emulator_stop() {
  [ -n "${EMULATOR_PID:-}" ] || return 0
  kill "$EMULATOR_PID" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$EMULATOR_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$EMULATOR_PID" 2>/dev/null || true
  wait "$EMULATOR_PID" 2>/dev/null || true
  EMULATOR_PID=
}
