package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/bot"
	"github.com/volcanicbot/volcanicbot/internal/liveview"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// healthMaxAge is how old the last successful getUpdates may be while the
// bot counts as healthy. A long poll returns at least every ~60 s.
const healthMaxAge = 150 * time.Second

// healthHandler is what HTTP_ADDR serves: /healthz, 200 while updates come
// in (polling alive, or the webhook registered), 503 before and when
// polling stalled; with a webhook, Telegram's posts at the webhook URL's
// path; and the login callback. Not /metrics: HTTP_ADDR is what a
// webhook's domain exposes to the internet (METRICS_ADDR serves those).
func (m *Main) healthHandler(tg *telegram.Client, b *bot.Bot) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ok, detail := tg.Health(time.Now(), healthMaxAge)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, detail)
	})
	if p := tg.WebhookPath(); p != "" {
		mux.Handle(p, tg.WebhookHandler())
	}
	if p := b.LoginCallbackPath(); p != "" {
		mux.Handle("GET "+p, b.LoginCallbackHandler())
	}
	if m.live != nil {
		mux.Handle(liveview.PathPrefix, m.live.Handler())
	}
	return mux
}

// runHealth is `volcanicbot health`, the container's health check: it asks
// the running bot's /healthz on HTTP_ADDR and exits 0 only on 200.
func runHealth(ctx context.Context, stdout io.Writer, environ []string) error {
	cfg, err := LoadConfig(lookupIn(environ), environ)
	if err != nil {
		return err
	}
	addr := cfg.HTTPAddr
	if addr == "" {
		return errors.New("HTTP_ADDR (http_addr) is not set: the health listener is off")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("HTTP_ADDR %q: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprint(stdout, strings.TrimSpace(string(body))+"\n")
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s", resp.Status)
	}
	return nil
}
