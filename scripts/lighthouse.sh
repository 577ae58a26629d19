#!/usr/bin/env bash
# Lighthouse on the dashboard, signed in: builds tidings, fills a fresh data folder (a
# team, my-saas with #payments, 40 Markdown events with tags, users, insights), signs in
# with curl for a session cookie, and runs Lighthouse (npm's lighthouse@12, mobile
# emulation, its default) RUNS times (default 3) on each page. Prints each page's median
# performance / accessibility / best practices / SEO scores and total blocking time.
# Usage: scripts/lighthouse.sh [path …]  (default: the main pages). Needs chromium and npx.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; echo "$work" >&2; }
trap cleanup EXIT
go build -o "$work/tidings" ./cmd/tidings
export TIDINGS_DATA="$work/data"
t=("$work/tidings")
mkdir -p "$work/data"
"${t[@]}" account create acme >/dev/null
"${t[@]}" project create my-saas >/dev/null
"${t[@]}" channel create my-saas payments >/dev/null
"${t[@]}" channel create my-saas deploys >/dev/null
printf 'correct horse\n' | "${t[@]}" user create ada@example.com --role owner >/dev/null
token=$("${t[@]}" token create --access full | tr -d '[:space:]')
port=$(( 20000 + RANDOM % 20000 ))
base=http://127.0.0.1:$port
"${t[@]}" serve --addr "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do curl -fsS "$base/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
pub() { curl -fsS -o /dev/null -X POST "$base$1" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$2"; }
plans=(basic premium team)
for i in $(seq 1 40); do
  plan=${plans[$((i % 3))]}
  pub /v1/log "{\"project\":\"my-saas\",\"channel\":\"payments\",\"event\":\"New Subscription $i\",\"description\":\"A new **$plan** subscription for \`user-$((i % 5))\`\",\"parser\":\"markdown\",\"icon\":\"💰\",\"notify\":true,\"user_id\":\"user-$((i % 5))\",\"tags\":{\"plan\":\"$plan\",\"seats\":$((i % 7 + 1))}}"
done
pub /v1/log '{"project":"my-saas","channel":"deploys","event":"deploy failed","icon":"🚨","description":"panic: boom\n    at main.go:12"}'
for u in 0 1 2 3 4; do pub /v1/identify "{\"project\":\"my-saas\",\"user_id\":\"user-$u\",\"properties\":{\"name\":\"User $u\",\"plan\":\"premium\"}}"; done
pub /v1/insight '{"project":"my-saas","title":"Monthly Revenue","value":"1000.50","change":"update","prefix":"$","icon":"💰"}'
pub /v1/insight '{"project":"my-saas","title":"Signups today","value":42,"change":"update","icon":"👥"}'
curl -fsS -c "$work/jar" -o /dev/null -X POST "$base/login" -H "Origin: $base" \
  --data-urlencode email=ada@example.com --data-urlencode 'password=correct horse'
cookie=$(awk '$6 == "tidings_session" {print $7}' "$work/jar")
[ -n "$cookie" ] || { echo "lighthouse.sh: signing in gave no session cookie" >&2; exit 1; }
echo "{\"Cookie\":\"tidings_session=$cookie\"}" >"$work/headers.json"
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(/p/my-saas "/p/my-saas?q=premium" /p/my-saas/users/user-1 /p/my-saas/insights /p/my-saas/charts /p/my-saas/users /settings/projects /settings/api /settings/members)
export CHROME_PATH=${CHROME_PATH:-$(command -v chromium)}
printf '%-28s %s\n' page "performance / accessibility / best practices / SEO (median of $runs) · total blocking time"
for p in "${pages[@]}"; do
  for r in $(seq 1 "$runs"); do
    npx -y lighthouse@12 "$base$p" --quiet --extra-headers="$work/headers.json" \
      --chrome-flags="--headless=new --no-sandbox --disable-gpu" --output=json --output-path="$work/lh-$r.json" >/dev/null 2>&1
  done
  PAGE="$p" node -e '
    const runs = process.argv.slice(1).map((f) => require(f));
    for (const r of runs) if (r.runtimeError) { console.log(process.env.PAGE.padEnd(28), "lighthouse failed:", r.runtimeError.message); process.exit(0); }
    const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const score = (k) => Math.round(100 * med(runs.map((r) => r.categories[k].score)));
    const tbt = med(runs.map((r) => r.audits["total-blocking-time"].numericValue));
    console.log(process.env.PAGE.padEnd(28), [score("performance"), score("accessibility"), score("best-practices"), score("seo")].join(" / "), "·", Math.round(tbt) + " ms");
  ' $(for r in $(seq 1 "$runs"); do echo "$work/lh-$r.json"; done)
done
