#!/usr/bin/env bash
# run.sh — issue 18 item 6's soak: is a data directory's growth bounded? The real binary with the real
# @playwright/mcp + Debian's Chromium (the shared browser), a fake Telegram and a scripted model on 127.0.0.1; N chats
# each upload a file, then visit pages nobody on the project wrote (Go's and Debian's HTML manuals) — a page snapshot
# under .playwright-mcp/ each, a snapshot result saved under results/ on every other visit when it is big, a
# screenshot on every fourth (an image in the private folder) — and send /new every few messages (an archived
# transcript). The data directory is walked every 5 s: bytes and files by kind and by chat. Run twice: with a small
# CHAT_DISK_BUDGET_MB, so that the plateau shows within minutes, and with the budget effectively off (1 TiB), the
# "before". Prints Markdown tables for docs/performance.md; checks every message was answered, that uploads, live
# transcripts, their images and browser state survived, and lists the bot's warnings and errors.
#
#   bench/disk-soak/run.sh [-chats 50] [-duration 20m] [-rate 4.6] [more flags for both runs]
#
# The defaults here (15 chats, 10 minutes, at most 2 messages a second) are what a 2-core machine carries beside
# other work; the red team's soak was 50 chats at 4.6 answered messages a second. Each run's samples are written to
# bin/disk-soak-<budget>.csv.
#
# Needs `npm ci` in tools/npm (or VOLCANIC_TEST_NPM_BIN), /usr/bin/chromium (or VOLCANIC_TEST_CHROMIUM), and for
# the Debian pages libjs-underscore, libxslt1-dev, nodejs-doc and valgrind (a missing page is skipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
npm=${VOLCANIC_TEST_NPM_BIN:-$PWD/tools/npm/node_modules/.bin}
chromium=${VOLCANIC_TEST_CHROMIUM:-/usr/bin/chromium}
mkdir -p bin
go build -o bin/volcanicbot ./cmd/volcanicbot
go build -o bin/disk-soak ./bench/disk-soak
for budget in 3 1048576; do
  bin/disk-soak -bin bin/volcanicbot -npm "$npm" -chromium "$chromium" -goroot "$(go env GOROOT)" \
    -chats 15 -duration 10m -rate 2 -budget-mb "$budget" -csv "bin/disk-soak-$budget.csv" "$@"
done
