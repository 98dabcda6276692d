package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
	"golang.org/x/sync/errgroup"

	"github.com/volcanicbot/volcanicbot/internal/bot"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// httpLimits bound what the clients of the bot's HTTP listeners may hold.
// HTTP_ADDR can face the internet (a webhook's domain): without them a
// client keeps an idle keep-alive connection, a file descriptor and a
// goroutine, for ever.
type httpLimits struct {
	// ReadHeader is the time to send a request's header; Read the whole
	// request (a webhook post is a few kilobytes); Write the time from the
	// end of the header to the end of the answer (a scrape reads every
	// server's memory; the login callback finishes the login within its
	// own 30 s); Idle how long a keep-alive connection may wait for its
	// next request.
	ReadHeader, Read, Write, Idle time.Duration
	// MaxHeaderBytes bounds a request's header (Telegram's, Prometheus's
	// and a login callback's are a few hundred bytes).
	MaxHeaderBytes int
	// MaxConns is the most connections open at once on a listener; more
	// wait in the kernel's queue until one closes. Telegram opens at most
	// 40 (setWebhook's default max_connections).
	MaxConns int
}

func defaultHTTPLimits() httpLimits {
	return httpLimits{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: time.Minute, Idle: time.Minute,
		MaxHeaderBytes: 16 << 10, MaxConns: 256}
}

// httpListener is one of the bot's HTTP listeners, bound, not yet serving.
type httpListener struct {
	name string // for the log and errors: "health listener", "metrics listener"
	ln   net.Listener
	srv  *http.Server
}

// listen binds addr (the setting named env) and prepares h to be served
// on it under the limits.
func (l httpLimits) listen(name, env, addr string, h http.Handler) (*httpListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", env, addr, err)
	}
	if l.MaxConns > 0 {
		ln = netutil.LimitListener(ln, l.MaxConns)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read, WriteTimeout: l.Write,
		IdleTimeout: l.Idle, MaxHeaderBytes: l.MaxHeaderBytes}
	return &httpListener{name: name, ln: ln, srv: srv}, nil
}

// serve serves until ctx ends, then shuts down within a second (and closes
// the connections left).
func (h *httpListener) serve(ctx context.Context, g *errgroup.Group) {
	g.Go(func() error {
		if err := h.srv.Serve(h.ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("%s: %w", h.name, err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := h.srv.Shutdown(sctx); err != nil {
			return h.srv.Close()
		}
		return nil
	})
}

// httpListeners binds the listeners the configuration asks for: HTTP_ADDR
// (/healthz, the webhook, the login callback) and METRICS_ADDR (/metrics),
// apart, because HTTP_ADDR is the one a webhook's domain exposes. Nothing
// is served yet; on an error none is left open.
func (m *Main) httpListeners(tg *telegram.Client, b *bot.Bot) ([]*httpListener, error) {
	limits := m.httpLimits
	if limits == (httpLimits{}) {
		limits = defaultHTTPLimits()
	}
	var out []*httpListener
	add := func(name, env, addr string, h http.Handler) error {
		if addr == "" {
			return nil
		}
		l, err := limits.listen(name, env, addr, h)
		if err != nil {
			for _, o := range out {
				o.ln.Close()
			}
			return err
		}
		m.logger.Info(name, "addr", l.ln.Addr().String())
		out = append(out, l)
		return nil
	}
	if err := add("health listener", "HTTP_ADDR", m.cfg.HTTPAddr, m.healthHandler(tg, b)); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.metrics.handler())
	if err := add("metrics listener", "METRICS_ADDR", m.cfg.MetricsAddr, mux); err != nil {
		return nil, err
	}
	return out, nil
}
