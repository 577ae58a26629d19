#!/usr/bin/env bash
# Load test on loopback: builds tidings, serves a fresh data folder with rate limits off,
# makes a token with the CLI, and runs bench/load against it. Bounded: each phase lasts
# DURATION (default 5s). Usage: bench/load.sh [-clients 64] [-duration 5s] [-streams 300]
# [-devices 1000] (then USERS=50: each user may have 20 devices).
# The server runs pinned to the cores in SERVER_CPUS (e.g. SERVER_CPUS=1 for one core) and
# the load in LOAD_CPUS, when given.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/tidings" ./cmd/tidings
go build -o "$work/load" ./bench/load
port=$(( 20000 + RANDOM % 20000 ))
t="$work/tidings"
$t account create load --data "$work/data" >/dev/null
$t project create load --data "$work/data" >/dev/null
$t channel create load events --data "$work/data" >/dev/null
token=$($t token create --access full --data "$work/data")
# Dashboard users for -streams: each signs in a few sessions, each from its own
# forwarded address (the server believes 127.0.0.1 as a proxy), under the sign-in limits.
users=$(( ${USERS:-6} ))
for i in $(seq 1 "$users"); do
  echo 'load password' | $t user create "load-$i@example.com" --account load --data "$work/data" >/dev/null
done
server_pin=() load_pin=()
[ -n "${SERVER_CPUS:-}" ] && server_pin=(taskset -c "$SERVER_CPUS")
[ -n "${LOAD_CPUS:-}" ] && load_pin=(taskset -c "$LOAD_CPUS")
"${server_pin[@]}" "$t" serve --addr "127.0.0.1:$port" --data "$work/data" --token-rate 0 --public-ip-rate 0 \
  --trusted-proxies 127.0.0.1 --allow-private-targets ${SERVE_FLAGS:-} >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
"${load_pin[@]}" "$work/load" -url "http://127.0.0.1:$port" -token "$token" "$@"
