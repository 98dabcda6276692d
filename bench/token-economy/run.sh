#!/usr/bin/env bash
# run.sh — what a browsing chat costs in input tokens: naive client, the bot with tool search off, the bot as shipped.
#
#   bench/token-economy/run.sh
#
# Builds bin/volcanicbot and the benchmark (bench/token-economy/main.go), which serves a fake Telegram, a scripted
# model (the llmtest fake of the OpenAI API) and pages nobody on the project wrote ($(go env GOROOT)/doc/go_spec.html,
# Debian's libffi and underscore HTML manuals) from 127.0.0.1, and runs the real binary twice (LLM_TOOL_SEARCH=off,
# then auto) with the real @playwright/mcp + Chromium, server-everything and a 60-tool server (fakemcp's many-tools
# mode) configured beside the browser, through the same 20-step browse in 4 turns. Every request is counted with the
# o200k tokenizer; the naive client's requests are computed from the off run's transcript (every schema, every result
# verbatim). Prints a Markdown table for docs/performance.md.
# Needs `npm ci` in tools/npm, /usr/bin/chromium, and the Debian packages libffi-dev and libjs-underscore (their docs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
npm=${VOLCANIC_TEST_NPM_BIN:-$PWD/tools/npm/node_modules/.bin}
mkdir -p bin
go build -o bin/volcanicbot ./cmd/volcanicbot
go build -o bin/token-economy ./bench/token-economy
bin/token-economy -bin "$PWD/bin/volcanicbot" -npm "$npm" -chromium "${VOLCANIC_TEST_CHROMIUM:-/usr/bin/chromium}" -goroot "$(go env GOROOT)"
