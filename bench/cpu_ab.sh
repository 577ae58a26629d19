#!/usr/bin/env bash
# CPU time per operation of a Go benchmark at two commits, alternating A and B runs.
# It counts the process's CPU time (perf's task-clock), not wall time, so that other
# work on a busy machine (which deschedules the benchmark) does not count; the fixed
# cost of starting is removed by running N1 and N2 iterations: (T(N2)-T(N1))/(N2-N1).
# Usage: bench/cpu_ab.sh BASE_COMMIT [PKG] [BENCH] [CPUS] [N1] [N2] [ROUNDS]
# e.g.   bench/cpu_ab.sh 3f88862 ./api 'DecodeLog/tidings$' 1 20000 220000 7
#        bench/cpu_ab.sh 3f88862 ./api LogHandler 0,1 2000 22000 5
# Prints each run and the medians: base (the commit), head (the working tree), ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1 pkg=${2:-./api} bench=${3:-'DecodeLog/tidings$'} cpus=${4:-1} n1=${5:-20000} n2=${6:-220000} rounds=${7:-7}
command -v perf >/dev/null || { echo "cpu_ab.sh needs perf (apt-get install linux-perf)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git archive "$base" | tar -x -C "$work/src"
(cd "$work/src" && go test -c -o "$work/base.test" "$pkg")
go test -c -o "$work/head.test" "$pkg"
unset TIDINGS_TEST_DATABASE_URL # the embedded store: one process
cpu() { # binary iterations → CPU milliseconds
  perf stat -x, -e task-clock taskset -c "$cpus" "$1" -test.run '^$' -test.bench "$bench" -test.benchtime "${2}x" 2>&1 >/dev/null |
    grep task-clock | cut -d, -f1
}
for _ in $(seq 1 "$rounds"); do
  for w in base head; do
    a=$(cpu "$work/$w.test" "$n1"); b=$(cpu "$work/$w.test" "$n2")
    echo "$w $(awk -v a="$a" -v b="$b" -v n=$((n2 - n1)) 'BEGIN{printf "%.1f", (b-a)*1e6/n}')"
  done
done | tee "$work/runs"
awk '{v[$1]=v[$1] " " $2} END{
  for (w in v) { n=split(substr(v[w],2), x, " "); asort(x); m[w]=(n%2)?x[(n+1)/2]:(x[n/2]+x[n/2+1])/2 }
  printf "median ns/op of CPU: base %.1f, head %.1f, head/base %.3f\n", m["base"], m["head"], m["head"]/m["base"] }' "$work/runs"
