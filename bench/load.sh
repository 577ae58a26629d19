#!/usr/bin/env bash
# Load test on loopback: builds tidings, serves a fresh data folder with rate limits off,
# makes a token with the CLI, and runs bench/load against it. Bounded: each phase lasts
# DURATION (default 5s). Usage: bench/load.sh [-clients 64] [-duration 5s]
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
$t serve --addr "127.0.0.1:$port" --data "$work/data" --token-rate 0 --public-ip-rate 0 2>"$work/serve.log" &
server=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
"$work/load" -url "http://127.0.0.1:$port" -token "$token" "$@"
