#!/usr/bin/env bash
# run.sh — what summaries keep of a long chat, and what they cost: recall of 40 early facts after 200 turns, input
# tokens, and the share of the prompt the provider's cache reads; with summaries, with today's trimming, with no budget.
#
#   bench/summary-recall/run.sh [-context 100000]
#
# Builds the benchmark (bench/summary-recall), which runs a 200-turn scripted conversation through the bot's sessions
# (internal/session: the real agent loop, the real Anthropic adapter and its cache marks) against the llmtest fake of
# the Anthropic API, three times. The browsing turns read real manuals with the built-in read tool: the Go spec
# ($(go env GOROOT)/doc/go_spec.html) and Debian's HTML manuals under /usr/share/doc where installed (python3,
# zlib1g-dev, libjs-underscore, libffi-dev). The scripted model answers, and summarises, only from what each request
# holds. Prints a Markdown table for docs/performance.md. Takes about two minutes; no browser, no network.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p bin
go build -o bin/summary-recall ./bench/summary-recall
bin/summary-recall -goroot "$(go env GOROOT)" "$@"
