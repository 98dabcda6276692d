#!/usr/bin/env bash
# Where a call's time goes, client and server apart: BenchmarkCallTool/raw-echo
# and BenchmarkCallToolFloor, each pinned to CPU 0, with perf stat attached to
# the client (the test binary) and to the server (its child) for a steady
# stretch. Everything per call (per client write):
#
#   bench/call-vs-floor/cpu.sh [-n runs]
#
# cpu µs of each process, the client's context switches, futex calls (the
# runtime waking its threads), reads (one more than a call's line: a read
# that found the pipe empty) and epoll_pwait calls (the runtime's poller).
# Needs perf (linux-tools) and permission to attach to the processes.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=3
while [ $# -gt 0 ]; do
	case "$1" in
	-n) runs="$2"; shift 2 ;;
	*) echo "usage: $0 [-n runs]" >&2; exit 2 ;;
	esac
done

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/mcp.test" ./internal/mcpclient

events=task-clock,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_pwait
measure() { # benchmark regexp → one line
	taskset -c 0 "$bin/mcp.test" -test.run '^$' -test.bench "$1" -test.benchtime 300000x >/dev/null 2>&1 &
	local test=$!
	sleep 0.7 # started, in its loop
	local server
	server="$(pgrep -P "$test" | head -1)"
	perf stat -x, -e "$events" -p "$test" -- sleep 1.5 2>"$bin/client.csv" &
	perf stat -x, -e "$events" -p "$server" -- sleep 1.5 2>"$bin/server.csv" &
	wait %2 %3
	kill "$test" 2>/dev/null || true
	wait "$test" 2>/dev/null || true
	awk -F, -v name="$1" '
		FNR == 1 { f++ }
		{ v[f, $3] = $1 }
		END {
			calls = v[1, "syscalls:sys_enter_write"]
			printf "%-20s client %5.2f µs (ctx %.2f, futex %.2f, read %.2f, epoll %.2f)  server %5.2f µs  wall %5.2f µs\n", name,
				v[1, "task-clock"] * 1000 / calls, v[1, "context-switches"] / calls, v[1, "syscalls:sys_enter_futex"] / calls,
				v[1, "syscalls:sys_enter_read"] / calls, v[1, "syscalls:sys_enter_epoll_pwait"] / calls,
				v[2, "task-clock"] * 1000 / calls, 1.5e6 / calls
		}' "$bin/client.csv" "$bin/server.csv"
}
for _ in $(seq "$runs"); do
	measure 'CallTool$/raw-echo$'
	measure 'CallToolFloor$'
done
