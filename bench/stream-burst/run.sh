#!/usr/bin/env bash
# run.sh — issue 13's flood-control benchmark: 200 chats × 5 streamed answers through the real binary against a fake
# Bot API that enforces Telegram's limits (1 message a second in a chat, 20 a minute in a group, 30 a second in all)
# and answers a call that breaks them with a 429 and retry_after; a slow model (llmtest's OpenAI fake, 30 pieces
# 100 ms apart). One Markdown row per setting: 429s, the time until every final answer was delivered, the streamed
# updates sent and coalesced. Prints the rows for docs/performance.md.
#
#   bench/stream-burst/run.sh [more flags for every run, e.g. -chats 50]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p bin
go build -o bin/volcanicbot ./cmd/volcanicbot
go build -o bin/stream-burst ./bench/stream-burst
echo "| burst | 429s received (chats, most in one chat) | every final answer delivered | calls | updates coalesced |"
echo "|---|---|---|---|---|"
bin/stream-burst -bin bin/volcanicbot "$@"                  # private chats, one message edited in place
bin/stream-burst -bin bin/volcanicbot -drafts "$@"          # private chats, sendMessageDraft
bin/stream-burst -bin bin/volcanicbot -groups 50 "$@"       # a quarter of them groups (20 a minute)
bin/stream-burst -bin bin/volcanicbot -stream=false "$@"    # STREAM_REPLIES=false: the floor
bin/stream-burst -bin bin/volcanicbot -pieces 100 "$@"      # answers of 10 s instead of 3 s
bin/stream-burst -bin bin/volcanicbot -chats 20 "$@"        # a burst within the 30 a second
bin/stream-burst -bin bin/volcanicbot -chats 20 -drafts "$@"
