#!/usr/bin/env bash
# run.sh — tools/call round trip: our Go MCP client vs the official TypeScript SDK, side by side.
#
# Usage (from anywhere; `make bench` runs it with the defaults):
#   bench/mcp-call-vs-ts/run.sh [-n N] [-r ROUNDS] [--tool NAME --args JSON -- CMD [ARG...]]
#
# Without a command it measures both clients against:
#   raw-echo      FAKE_MCP_MODE=raw-echo bin/fakemcp.test   (minimal hand-written echo server: the floor)
#   mcp-go fake   FAKE_MCP_MODE=normal   bin/fakemcp.test   (the mcp-go based fake server the tests use)
#   everything    tools/npm/node_modules/.bin/mcp-server-everything (Node reference server; when installed)
# With a command after `--` it measures that server only (tool and JSON arguments from --tool/--args).
#
# Each client prints one JSON line {"client":…,"calls":N,"us_per_call":X,"cold_ms":Y} (cold: spawn, handshake and the first call).
# The two clients run ROUNDS times each (default 5), alternating, so that a shared machine's changing load hits both
# alike; this script prints the medians and ours/ts (below 1 means the Go client is faster): the ratio of the medians
# and the median of the per-round ratios. Needs node, go and `npm ci` in tools/npm.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD

n=2000
rounds=5
tool=
args=
custom=()
while [[ $# -gt 0 ]]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--tool) tool=$2; shift 2 ;;
	--args) args=$2; shift 2 ;;
	--) shift; custom=("$@"); break ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

ts_client=(node "$root/bench/mcp-call-vs-ts/ts-client.mjs")
go_client="$root/bin/mcp-bench-goclient"
fake="$root/bin/fakemcp.test"
everything="$root/tools/npm/node_modules/.bin/mcp-server-everything"

echo "building bin/fakemcp.test and bin/mcp-bench-goclient…" >&2
mkdir -p "$root/bin"
go test -c -o "$fake" ./internal/fakemcp
go build -o "$go_client" ./bench/mcp-call-vs-ts/goclient

results=() # one "label<TAB>ts-json<TAB>go-json" line per server

# measure LABEL TOOL ARGS ENV-ASSIGNMENT CMD...   (empty TOOL/ARGS: each client's default, echo {"text":"hi"})
measure() {
	local label=$1 t=$2 a=$3 envset=$4
	shift 4
	local flags_ts=(-n "$n") flags_go=(-n "$n")
	if [[ -n $t ]]; then flags_ts+=(--tool "$t"); flags_go+=(-tool "$t"); fi
	if [[ -n $a ]]; then flags_ts+=(--args "$a"); flags_go+=(-args "$a"); fi
	echo "== $label: ${envset:+$envset }$*" >&2
	local ts_all="" go_all="" ts_out go_out
	for ((round = 1; round <= rounds; round++)); do
		ts_out=$(env $envset "${ts_client[@]}" "${flags_ts[@]}" -- "$@" | tail -n 1) || ts_out='{}'
		echo "   ts-sdk: $ts_out" >&2
		go_out=$(env $envset "$go_client" "${flags_go[@]}" -- "$@" | tail -n 1) || go_out='{}'
		echo "   go:     $go_out" >&2
		ts_all+="$ts_out|" go_all+="$go_out|"
	done
	results+=("$label"$'\t'"${ts_all%|}"$'\t'"${go_all%|}")
}

if [[ ${#custom[@]} -gt 0 ]]; then
	measure "custom" "$tool" "$args" "" "${custom[@]}"
else
	measure "raw-echo" "" "" FAKE_MCP_MODE=raw-echo "$fake"
	measure "mcp-go fake" "" "" FAKE_MCP_MODE=normal "$fake"
	if [[ -x $everything ]]; then
		measure "everything (node)" echo '{"message":"hi"}' "" "$everything"
	else
		echo "== skipping server-everything: run npm ci in tools/npm" >&2
	fi
fi

printf '%s\n' "${results[@]}" | node -e '
const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean);
const nums = (s, k) => s.split("|").map((j) => { try { const v = JSON.parse(j)[k]; return typeof v === "number" ? v : null; } catch { return null; } });
const median = (a) => { const b = a.filter((v) => v != null).sort((x, y) => x - y); if (!b.length) return null; const m = b.length >> 1; return b.length % 2 ? b[m] : (b[m - 1] + b[m]) / 2; };
const f = (v, d = 1) => (v == null ? "error" : v.toFixed(d));
const rows = [["server (medians)", "ts µs/call", "go µs/call", "ours/ts", "per-round ours/ts", "ts cold ms", "go cold ms"]];
for (const line of lines) {
  const [label, ts, go] = line.split("\t");
  const tu = nums(ts, "us_per_call"), gu = nums(go, "us_per_call");
  const pairs = tu.map((t, i) => (t && gu[i] ? gu[i] / t : null));
  const mt = median(tu), mg = median(gu);
  rows.push([label, f(mt), f(mg), mt && mg ? (mg / mt).toFixed(2) : "-", f(median(pairs), 2),
    f(median(nums(ts, "cold_ms"))), f(median(nums(go, "cold_ms")))]);
}
const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  "));
'
echo "timed calls per client and server: $n (after a warm-up), rounds: $rounds"
