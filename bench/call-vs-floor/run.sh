#!/usr/bin/env bash
# BenchmarkCallTool/raw-echo against BenchmarkCallToolFloor, run as
# alternating pairs so that the machine's changing load hits both alike.
#
#   bench/call-vs-floor/run.sh [-n pairs] [-calls calls-per-run] [-pin]
#
# -pin runs both on CPU 0 (client and server share one core: what is left is
# CPU cost, without the cross-core wake-up noise of a shared 2-core VM).
# Prints the median and minimum µs/call of each and the median of the
# per-pair ratios. The target (issue 2) is ours ≤ 1.3× the floor.
set -euo pipefail
cd "$(dirname "$0")/../.."

pairs=15 calls=5000 pin=""
while [ $# -gt 0 ]; do
	case "$1" in
	-n) pairs="$2"; shift 2 ;;
	-calls) calls="$2"; shift 2 ;;
	-pin) pin="taskset -c 0"; shift ;;
	*) echo "usage: $0 [-n pairs] [-calls n] [-pin]" >&2; exit 2 ;;
	esac
done

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/mcp.test" ./internal/mcpclient

run() { # benchmark regexp → ns/op
	$pin "$bin/mcp.test" -test.run '^$' -test.bench "$1" -test.benchtime "${calls}x" | awk '/ns\/op/ {print $3}'
}
for _ in $(seq "$pairs"); do
	echo "$(run 'CallTool$/raw-echo$') $(run 'CallToolFloor$')"
done | awk -v pairs="$pairs" -v pin="${pin:-no}" '
	{ ours[NR] = $1; floor[NR] = $2; ratio[NR] = $1 / $2 }
	function median(a, n,   i, j, t, b) {
		for (i = 1; i <= n; i++) b[i] = a[i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
		return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
	}
	function minimum(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
	END {
		printf "pairs %d, pinned: %s\n", NR, pin
		printf "ours  µs/call: median %.1f, min %.1f\n", median(ours, NR) / 1000, minimum(ours, NR) / 1000
		printf "floor µs/call: median %.1f, min %.1f\n", median(floor, NR) / 1000, minimum(floor, NR) / 1000
		printf "ours/floor: median of medians %.2f, min/min %.2f, median of pair ratios %.2f\n",
			median(ours, NR) / median(floor, NR), minimum(ours, NR) / minimum(floor, NR), median(ratio, NR)
	}'
