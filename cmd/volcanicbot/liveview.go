package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/liveview"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// The browser hand-off's wiring (issue 23): the live view's server on
// HTTP_ADDR under liveview.PathPrefix, and the session's Handoffs port,
// which reaches a chat's tab through the chat's own MCP session.

// validatePublicURL checks PUBLIC_URL: an https origin (http on loopback,
// for tests), nothing after it, and HTTP_ADDR to serve it.
func (c *Config) validatePublicURL() []error {
	if c.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(c.PublicURL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return []error{fmt.Errorf("PUBLIC_URL (public_url) must be an https URL, e.g. https://bot.example.com (got %q)", c.PublicURL)}
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return []error{fmt.Errorf("PUBLIC_URL (public_url) must be https: Telegram opens Mini Apps over https only (got %q)", c.PublicURL)}
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return []error{fmt.Errorf("PUBLIC_URL (public_url) must be an origin only, without path, query or user (got %q)", c.PublicURL)}
	case c.HTTPAddr == "":
		return []error{errors.New("PUBLIC_URL (public_url) needs HTTP_ADDR (http_addr): the live view is served on that listener")}
	}
	return nil
}

// publicOrigin is the bot's public origin for the live view's links:
// PUBLIC_URL, else the webhook's origin; "" without either.
func (c *Config) publicOrigin() string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(c.PublicURL, "/")
	}
	if c.Telegram.WebhookURL == "" || c.HTTPAddr == "" {
		return ""
	}
	u, err := url.Parse(c.Telegram.WebhookURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// liveView is the live view's server when the hand-off is on — the browser
// preset, HTTP_ADDR and a public origin — else nil. No I/O.
func (m *Main) liveView() *liveview.Server {
	origin := m.cfg.publicOrigin()
	if !m.preset.IsEnabled() || origin == "" {
		return nil
	}
	admins := m.cfg.Telegram.Admins
	return liveview.New(liveview.Options{BotToken: m.cfg.Telegram.Token, BaseURL: origin, Logger: m.logger,
		IsAdmin: func(user int64) bool { return slices.Contains(admins, user) }})
}

// handoffs is session.Handoffs over the live view's server.
type handoffs struct {
	live *liveview.Server
	// cdpEndpoint and cdpHeader are the remote browser's
	// (PLAYWRIGHT_CDP_ENDPOINT); "" when the browsers run here.
	cdpEndpoint string
	cdpHeader   http.Header
	client      *http.Client
	logger      *slog.Logger
}

func (m *Main) handoffs(live *liveview.Server) *handoffs {
	h := &handoffs{live: live, cdpEndpoint: m.preset.CDPEndpoint, client: m.HTTPClient, logger: m.logger.With("component", "liveview")}
	if h.client == nil {
		h.client = &http.Client{}
	}
	if name, value, ok := strings.Cut(m.preset.CDPHeader, ":"); ok {
		h.cdpHeader = http.Header{}
		h.cdpHeader.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h
}

func (h *handoffs) Begin(_ context.Context, req session.HandoffRequest) (session.LiveHandoff, error) {
	ms, ok := req.MCP.(*mcpclient.Session)
	if !ok {
		return nil, errors.New("the chat's MCP session cannot reach its browser")
	}
	l, err := h.live.Begin(liveview.Handoff{Chat: req.Place.Chat, Topic: req.Place.Topic, User: req.UserID,
		// Always a Mini App, whose page must prove its viewer: in a group
		// too, whose link goes to a private chat (bot.showGroupHandoff).
		Group: req.Place.Chat < 0, MiniApp: true, Timeout: req.Timeout,
		Connect: func(ctx context.Context) (liveview.Target, error) { return h.connect(ctx, ms) }})
	if err != nil {
		return nil, err
	}
	return liveHandoff{l}, nil
}

// runCode runs code on the chat's current tab in its own session of the
// browser server (liveview.RunCode). Nothing of it is logged.
func runCode(ms *mcpclient.Session) liveview.RunCode {
	return func(ctx context.Context, code string) (string, error) {
		args, err := json.Marshal(map[string]string{"code": code})
		if err != nil {
			return "", err
		}
		return ms.CallOwn(ctx, preset.PlaywrightServer, liveview.LocateTool, args)
	}
}

// connect reaches the chat's current tab: a remote browser over its CDP
// endpoint (the tab located through the chat's session, then checked to be
// in the chat's context); a browser of this machine through the chat's
// session alone (liveview.MCPTarget: it has no DevTools port, and none is
// opened).
func (h *handoffs) connect(ctx context.Context, ms *mcpclient.Session) (liveview.Target, error) {
	run := runCode(ms)
	if h.cdpEndpoint == "" {
		h.logger.Debug("live view: the tab through the chat's browser session")
		return liveview.NewMCPTarget(run), nil
	}
	h.logger.Debug("live view: the tab over the remote browser's endpoint")
	answer, err := run(ctx, liveview.LocateCode)
	if err != nil {
		return nil, fmt.Errorf("locate the chat's tab: %w", err)
	}
	target, bctx, err := liveview.ParseLocate(answer)
	if err != nil {
		return nil, err
	}
	ws, err := liveview.BrowserEndpoint(ctx, h.client, h.cdpEndpoint, h.cdpHeader)
	if err != nil {
		return nil, err
	}
	return liveview.AttachCDP(ctx, liveview.CDPOptions{Endpoint: ws, Header: h.cdpHeader, TargetID: target, ContextID: bctx})
}

// liveHandoff is a *liveview.Live as the session's LiveHandoff.
type liveHandoff struct{ l *liveview.Live }

func (h liveHandoff) URL() string                  { return h.l.URL() }
func (h liveHandoff) Relink() string               { return h.l.Relink() }
func (h liveHandoff) Done() <-chan struct{}        { return h.l.Done() }
func (h liveHandoff) End(o session.HandoffOutcome) { h.l.End(liveOutcome(o)) }

func (h liveHandoff) Outcome() session.HandoffOutcome {
	switch h.l.Outcome() {
	case liveview.OutcomeDone:
		return session.HandoffDone
	case liveview.OutcomeTimeout:
		return session.HandoffTimeout
	}
	return session.HandoffStopped
}

func liveOutcome(o session.HandoffOutcome) liveview.Outcome {
	switch o {
	case session.HandoffDone:
		return liveview.OutcomeDone
	case session.HandoffTimeout:
		return liveview.OutcomeTimeout
	}
	return liveview.OutcomeStopped
}
