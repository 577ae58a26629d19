#!/usr/bin/env bash
# Load test on loopback: builds tidings, serves a fresh data folder with rate limits off,
# makes a token with the CLI, starts the baseline server (bearer check + JSON decode, no
# store) on the same cores, and runs bench/load against both. Bounded: each phase lasts
# DURATION (default 5s). Usage: bench/load.sh [-clients 64] [-duration 5s] [-streams 300]
# [-devices 1000] (then USERS=50: each user may have 20 devices) [-batch 100 -batch-clients 16] [-pages]. DATA=folder runs on an
# existing store (e.g. one bench/seed filled) and keeps it.
# The server runs pinned to the cores in SERVER_CPUS (e.g. SERVER_CPUS=1 for one core) and
# the load in LOAD_CPUS, when given; SERVER_ENV="NAME=value …" sets its environment. DATABASE_URL=postgres://… runs on PostgreSQL (in a new
# schema, dropped after; needs psql), and INSTANCES=2 then starts two servers on it that
# share the clients.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
servers=()
schema=
cleanup() {
  for s in "${servers[@]}"; do kill "$s" 2>/dev/null || true; wait "$s" 2>/dev/null || true; done
  [ -n "$schema" ] && psql -q "$DATABASE_URL" -c "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/tidings" ./cmd/tidings
go build -o "$work/load" ./bench/load
port=$(( 20000 + RANDOM % 20000 ))
t="$work/tidings"
store=(--data "${DATA:-$work/data}") # DATA=folder: an existing store (bench/seed), kept
mkdir -p "${DATA:-$work/data}" # the CLI opens an existing folder only
if [ -n "${DATABASE_URL:-}" ]; then
  schema="load_$$_$RANDOM"
  psql -q "$DATABASE_URL" -c "CREATE SCHEMA $schema" >/dev/null
  sep='?'; case "$DATABASE_URL" in *\?*) sep='&';; esac
  store=(--database "${DATABASE_URL}${sep}search_path=$schema")
fi
$t account create load "${store[@]}" >/dev/null 2>&1 || true # an existing store may have it
$t project create load --account load "${store[@]}" >/dev/null 2>&1 || true
$t channel create load events --account load "${store[@]}" >/dev/null 2>&1 || true
$t channel create load live --account load "${store[@]}" >/dev/null 2>&1 || true
token=$($t token create --account load --access full "${store[@]}")
# Dashboard users for -streams: each signs in a few sessions, each from its own
# forwarded address (the server believes 127.0.0.1 as a proxy), under the sign-in limits.
users=$(( ${USERS:-6} ))
for i in $(seq 1 "$users"); do
  echo 'load password' | $t user create "load-$i@example.com" --account load "${store[@]}" >/dev/null 2>&1 || true
done
server_pin=() load_pin=()
[ -n "${SERVER_CPUS:-}" ] && server_pin=(taskset -c "$SERVER_CPUS")
[ -n "${LOAD_CPUS:-}" ] && load_pin=(taskset -c "$LOAD_CPUS")
urls= pids= metrics=
for i in $(seq 1 "${INSTANCES:-1}"); do
  p=$(( port + i - 1 ))
  m=$(( port + 100 + i ))
  env ${SERVER_ENV:-} "${server_pin[@]}" "$t" serve --addr "127.0.0.1:$p" "${store[@]}" --token-rate 0 --public-ip-rate 0 \
    --trusted-proxies 127.0.0.1 --allow-private-targets --metrics-addr "127.0.0.1:$m" ${SERVE_FLAGS:-} >"$work/serve-$i.log" 2>&1 &
  servers+=($!)
  ready=
  for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$p/readyz" >/dev/null && ready=1 && break; sleep 0.1; done
  if [ -z "$ready" ]; then echo "load.sh: the server on port $p did not start:" >&2; cat "$work/serve-$i.log" >&2; exit 1; fi
  urls="${urls:+$urls,}http://127.0.0.1:$p"
  pids="${pids:+$pids,}$!"
  metrics="${metrics:+$metrics,}http://127.0.0.1:$m/metrics"
done
b=$(( port + 200 ))
"${server_pin[@]}" "$work/load" -serve-baseline "127.0.0.1:$b" -token "$token" &
servers+=($!)
base_pid=$!
ready=
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$b/healthz" >/dev/null && ready=1 && break; sleep 0.1; done
[ -n "$ready" ] || { echo "load.sh: the baseline server on port $b did not start" >&2; exit 1; }
"${load_pin[@]}" "$work/load" -url "$urls" -token "$token" -server-pids "$pids" -metrics "$metrics" \
  -baseline "http://127.0.0.1:$b" -baseline-pid "$base_pid" "$@"
