# volcanicbot: the bot, Node.js, the pinned @playwright/mcp and Debian's Chromium in one image.
#
#   docker build -t volcanicbot .
#   docker run -d --init --memory 2g -v volcanic-data:/data --env-file volcanicbot.env volcanicbot
#
# compose.yaml (used by Coolify too) and docs/deployment.md say how to run it.

# ---- build: a static binary ----------------------------------------------------------------------
FROM golang:1.26-bookworm AS build

WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=readonly

# The Go module cache (/go/pkg/mod: this image's GOPATH is /go) and build cache (/root/.cache/go-build) are
# BuildKit cache mounts. They stay on the build host between builds, outside the image, so a redeploy (Coolify
# builds on the same server) downloads no module again and compiles only the packages an edit touched.
# `docker builder prune` empties them. BuildKit (Docker's default builder since 23, buildx) and podman/buildah
# know RUN --mount without a `# syntax=` line; the legacy builder (DOCKER_BUILDKIT=0) does not.
# Modules first, in their own step: it runs again only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/volcanicbot ./cmd/volcanicbot

# ---- runtime ---------------------------------------------------------------------------------------
# Debian bookworm-slim with the official Node.js build. @playwright/mcp 0.0.83 declares node >= 18, but
# the Playwright it depends on (1.64) refuses to start on Node.js older than 20, and bookworm's own
# nodejs package is 18.20. Everything else below comes from Debian.
FROM node:24-bookworm-slim

# Chromium (started by @playwright/mcp as /usr/bin/chromium), tini (PID 1: signals, zombie reaping),
# CA certificates, and fonts for readable screenshots: Latin (metric-compatible with Arial, Times and
# Courier), colour emoji and CJK. Chromium's other recommended packages are not needed headless.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      chromium \
      fonts-liberation \
      fonts-noto-color-emoji \
      fonts-wqy-zenhei \
      tini \
 && rm -rf /var/lib/apt/lists/* \
 && chromium --version

# The pinned @playwright/mcp, installed globally as `playwright-mcp`, so no chat waits for npx to download
# it. It must equal preset.PlaywrightVersion (internal/preset/playwright.go); a unit test reads the
# next line. The package downloads no browser, and PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD makes sure.
ARG PLAYWRIGHT_MCP_VERSION=0.0.83
ENV PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# The --version run leaves Node.js's compile cache in /tmp, root's: removed, so that the bot's user makes its own.
RUN npm install -g --no-audit --no-fund --update-notifier=false "@playwright/mcp@${PLAYWRIGHT_MCP_VERSION}" \
 && npm cache clean --force \
 && playwright-mcp --version \
 && rm -rf /tmp/node-compile-cache

# An unprivileged user. /data is created here, owned by it, so a new named volume starts with that owner.
# The bot runs as it; PID 1 (tini) stays root, so that no process of the bot's user can read PID 1's
# /proc/1/environ, which holds every variable of the container, the bot token included (the bot's own
# process makes itself non-dumpable: docs/security.md). The entrypoint drops to the user with setpriv
# when the container starts as root, and runs the bot as it is otherwise (a `user:` set in compose).
# No USER line, so `docker exec` starts as root too; volcanicbot started as root becomes the owner of
# /data (volcanic) by itself, before anything else, so `docker exec … volcanicbot check` works as the bot.
RUN groupadd --system --gid 10001 volcanic \
 && useradd --system --uid 10001 --gid volcanic --home-dir /home/volcanic --create-home --shell /bin/bash volcanic \
 && mkdir -p /data/agent \
 && chown -R volcanic:volcanic /data \
 && printf '%s\n' '#!/bin/sh' \
      '# Runs the bot as user volcanic (10001) when the container starts as root; see the Dockerfile.' \
      'if [ "$(id -u)" = 0 ]; then exec setpriv --reuid=10001 --regid=10001 --init-groups --inh-caps=-all -- volcanicbot "$@"; fi' \
      'exec volcanicbot "$@"' > /usr/local/bin/volcanicbot-entrypoint \
 && chmod 0755 /usr/local/bin/volcanicbot-entrypoint

COPY --from=build /out/volcanicbot /usr/local/bin/volcanicbot

# Defaults for the container; docs/deployment.md lists them. The browser is on: it is what this image is
# for (PLAYWRIGHT_ENABLED=false turns it off). PLAYWRIGHT_COMMAND runs the preinstalled package instead
# of npx. The preset adds --browser chromium; Chromium's sandbox needs user namespaces, which Docker's
# default seccomp profile denies, so the container is the isolation boundary. Logs are JSON lines.
ENV VOLCANIC_DATA_DIR=/data \
    VOLCANIC_AGENT_DIR=/data/agent \
    HTTP_ADDR=:8080 \
    METRICS_ADDR=127.0.0.1:9464 \
    LOG_FORMAT=json \
    PLAYWRIGHT_ENABLED=true \
    PLAYWRIGHT_COMMAND=playwright-mcp \
    PLAYWRIGHT_EXECUTABLE_PATH=/usr/bin/chromium \
    PLAYWRIGHT_NO_SANDBOX=true \
    HOME=/home/volcanic

ARG VERSION=dev
LABEL org.opencontainers.image.title="volcanicbot" \
      org.opencontainers.image.description="Telegram bot: an AI agent per chat, MCP tools, a headless Chromium" \
      org.opencontainers.image.version="${VERSION}"

WORKDIR /data
VOLUME ["/data"]

# /healthz on HTTP_ADDR, internal only: nothing needs publishing, the bot only makes outgoing connections.
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["volcanicbot", "health"]

# tini -s also reaps zombies when it is not PID 1 (compose's `init: true` or `docker run --init` put
# Docker's own init in front of it).
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "/usr/local/bin/volcanicbot-entrypoint"]
CMD ["run"]
