#!/usr/bin/env bash
# Issue 13's sender benchmark: a burst of 200 chats × 5 streamed answers at
# once against the fake Bot API that enforces Telegram's flood limits (one
# call a second in a chat, thirty a second in all) and answers a call that
# breaks them with 429 and retry_after. Prints, for the paced sender and for
# the same bot with its pacing lifted: the 429s received, the time until
# every final answer was delivered (and its p50/p99 per answer), the calls
# made, and the stream edits sent and coalesced.
#
#   bench/sender/run.sh [chats] [answers]
#
# See BenchmarkSenderBurst in internal/telegram/sender_bench_test.go and
# docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export SENDER_CHATS="${1:-200}" SENDER_ANSWERS="${2:-5}"
go test -run '^$' -bench SenderBurst -benchtime 1x -timeout 30m ./internal/telegram |
	grep -E 'sender_bench_test.go|^ok|FAIL' | sed 's/^ *sender_bench_test.go:[0-9]*: //'
