#!/usr/bin/env bash
# run.sh — the real browser through our MCP connection vs the official TypeScript SDK client.
#
#   bench/browser-vs-ts/run.sh [-r RUNS] [-n SNAPSHOTS]
#
# Both clients spawn the same command: the pinned @playwright/mcp (tools/npm) driving Debian's Chromium, headless,
# with a fresh --user-data-dir, exactly as the preset runs it. Per run each client reports
#   cold_ms      spawn + handshake + browser_navigate of a local page (the user's first browser call)
#   us_per_call  a warm browser_snapshot round trip (mean of -n calls after a warm-up)
# The runs alternate between the clients; the script prints the median of each and the ratio ours/ts.
# Pages are served by python3 -m http.server on 127.0.0.1. Needs `npm ci` in tools/npm and /usr/bin/chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD

runs=5
n=200
while [[ $# -gt 0 ]]; do
	case $1 in
	-r) runs=$2; shift 2 ;;
	-n) n=$2; shift 2 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

pw="$root/tools/npm/node_modules/.bin/playwright-mcp"
[[ -x $pw ]] || { echo "run.sh: $pw missing: run npm ci in tools/npm" >&2; exit 1; }
mkdir -p "$root/bin"
go build -o "$root/bin/mcp-bench-goclient" ./bench/mcp-call-vs-ts/goclient

site=$(mktemp -d)
trap 'kill "${http_pid:-}" 2>/dev/null || true; rm -rf "$site"' EXIT
cat >"$site/index.html" <<'HTML'
<!doctype html><html><head><title>bench</title></head><body><h1>Benchmark page</h1>
<ul><li><a href="#a">first</a></li><li><a href="#b">second</a></li></ul><p>Some text to snapshot.</p>
<form><input name="q" placeholder="search"><button>Go</button></form></body></html>
HTML
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >/dev/null 2>&1 &
http_pid=$!
sleep 0.5
url="http://127.0.0.1:$port/index.html"

results=$(mktemp)
for ((i = 0; i < runs; i++)); do
	for client in ts go; do
		profile=$(mktemp -d)
		cmd=("$pw" --headless --browser chromium --no-sandbox --executable-path /usr/bin/chromium
			--output-dir "$profile/out" --user-data-dir "$profile/profile")
		flags=(-n "$n" --warmup 20)
		if [[ $client == ts ]]; then
			out=$(node bench/mcp-call-vs-ts/ts-client.mjs "${flags[@]}" --tool browser_snapshot --args '{}' \
				--first-tool browser_navigate --first-args "{\"url\":\"$url\"}" -- "${cmd[@]}" | tail -n 1)
		else
			out=$("$root/bin/mcp-bench-goclient" -n "$n" -warmup 20 -tool browser_snapshot -args '{}' \
				-first-tool browser_navigate -first-args "{\"url\":\"$url\"}" -- "${cmd[@]}" | tail -n 1)
		fi
		rm -rf "$profile"
		echo "$client $out" | tee -a "$results" >&2
	done
done

node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
const by = { ts: { cold: [], warm: [] }, go: { cold: [], warm: [] } };
for (const l of lines) {
  const i = l.indexOf(" "); const c = l.slice(0, i); const j = JSON.parse(l.slice(i + 1));
  by[c].cold.push(j.cold_ms); by[c].warm.push(j.us_per_call);
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const r = (x) => x.toFixed(1);
console.log("                          ts-sdk     ours   ours/ts");
console.log(`cold navigate (ms)      ${r(med(by.ts.cold)).padStart(8)} ${r(med(by.go.cold)).padStart(8)}   ${(med(by.go.cold) / med(by.ts.cold)).toFixed(2)}`);
console.log(`warm snapshot (us)      ${r(med(by.ts.warm)).padStart(8)} ${r(med(by.go.warm)).padStart(8)}   ${(med(by.go.warm) / med(by.ts.warm)).toFixed(2)}`);
console.log(`medians of ${lines.length / 2} alternating runs each`);
' "$results"
rm -f "$results"
