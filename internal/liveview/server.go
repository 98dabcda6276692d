package liveview

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PathPrefix is where Handler serves on the bot's HTTP listener: the
// wiring mounts Handler there (mux.Handle(PathPrefix, s.Handler())).
const PathPrefix = "/live/"

// sessionHeader carries the page's session secret on each of its
// requests: a header, never a URL, so it is in no log, and a page of
// another origin cannot send it without a CORS preflight nobody answers.
const sessionHeader = "X-Live-Session"

// Limits of the endpoints. A long poll waits at most pollWait (well under
// the listener's one-minute write timeout); a page opens at most
// opensPerSecond links from one address (a 256-bit token cannot be guessed:
// this is to spare the CPU); a session makes at most requestsPerSecond
// requests (frames and input together).
const (
	pollWait          = 20 * time.Second
	opensPerSecond    = 2
	opensBurst        = 20
	requestsPerSecond = 40
	requestsBurst     = 80
	maxLimiterKeys    = 4096
	maxInputBody      = 16 << 10
	defaultMaxViews   = 16
)

// Options configure a Server.
type Options struct {
	// BotToken verifies Mini Apps' initData.
	BotToken string
	// BaseURL is the bot's public origin (PUBLIC_URL, or the webhook's):
	// links are BaseURL + PathPrefix + "t/" + token.
	BaseURL string
	// IsAdmin says whether a user is one of the bot's admins, who may open
	// a group's hand-off too; nil: nobody is.
	IsAdmin func(user int64) bool
	Logger  *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// MaxViews is the most hand-offs live at once; 0: 16.
	MaxViews int
}

// Server serves the live views of the hand-offs begun on it.
type Server struct {
	o     Options
	log   *slog.Logger
	links *links

	mu    sync.Mutex
	views map[*view]struct{}

	opens, requests *limiter
}

// ErrBusy is Begin's answer when MaxViews hand-offs are live: the tool
// tells the model to try again later.
var ErrBusy = errors.New("too many live views at once")

// New is a Server; it does no I/O.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxViews <= 0 {
		o.MaxViews = defaultMaxViews
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{o: o, log: log.With("component", "liveview"), links: newLinks(), views: map[*view]struct{}{},
		opens:    newLimiter(opensPerSecond, opensBurst, maxLimiterKeys),
		requests: newLimiter(requestsPerSecond, requestsBurst, maxLimiterKeys)}
}

func (s *Server) now() time.Time { return s.o.Now() }

// Begin starts a hand-off and gives its link.
func (s *Server) Begin(h Handoff) (*Live, error) {
	if h.Timeout <= 0 {
		h.Timeout = DefaultTimeout
	}
	s.mu.Lock()
	var stale []*view
	for v := range s.views {
		if v.ended() || !s.now().Before(v.deadline) {
			stale = append(stale, v)
		}
	}
	s.mu.Unlock()
	for _, v := range stale {
		s.end(v, OutcomeTimeout) // its Wait may be gone: end lets its tab go
	}
	s.mu.Lock()
	if len(s.views) >= s.o.MaxViews {
		s.mu.Unlock()
		return nil, ErrBusy
	}
	v := &view{h: h, deadline: s.now().Add(h.Timeout), frames: newFrames(), endCh: make(chan struct{}),
		authorized: !h.MiniApp, log: s.log.With("chat", h.Chat, "topic", h.Topic)}
	s.views[v] = struct{}{}
	s.mu.Unlock()
	v.log.Info("live view begun", "mini_app", h.MiniApp, "timeout", h.Timeout)
	return &Live{v: v, s: s, url: s.linkURL(s.links.add(v))}, nil
}

func (s *Server) linkURL(token string) string {
	return strings.TrimSuffix(s.o.BaseURL, "/") + PathPrefix + "t/" + token
}

func (s *Server) end(v *view, o Outcome) {
	v.end(o, s.links)
	s.mu.Lock()
	delete(s.views, v)
	s.mu.Unlock()
}

// Close ends every live hand-off (OutcomeStopped): the bot stops.
func (s *Server) Close() {
	s.mu.Lock()
	vs := make([]*view, 0, len(s.views))
	for v := range s.views {
		vs = append(vs, v)
	}
	s.mu.Unlock()
	for _, v := range vs {
		s.end(v, OutcomeStopped)
	}
}

// Handler serves the live views under PathPrefix.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathPrefix+"t/{token}", s.servePage)
	mux.HandleFunc("GET "+PathPrefix+"a/{file}", serveAsset)
	mux.HandleFunc("POST "+PathPrefix+"s/auth", s.session(s.serveAuth, false))
	mux.HandleFunc("GET "+PathPrefix+"s/frame", s.session(s.serveFrame, true))
	mux.HandleFunc("POST "+PathPrefix+"s/input", s.session(s.serveInput, true))
	mux.HandleFunc("POST "+PathPrefix+"s/done", s.session(s.serveDone, true))
	mux.HandleFunc(PathPrefix, func(w http.ResponseWriter, r *http.Request) { notFound(w) })
	return securityHeaders(mux)
}

// frameAncestors are who may show the page in a frame: Telegram Web (its
// A and K clients, at web.telegram.org) opens Mini Apps in an iframe; the
// apps on phones and desktops open them in a web view of their own, top
// level, where frame-ancestors does not apply. Nobody else may frame it.
const frameAncestors = "https://web.telegram.org"

// securityHeaders are on every answer: nothing but this origin's script,
// style and images (frames are blob: URLs the page makes), no referrer (the
// token is in the page's URL), no framing but Telegram Web's, no caching.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob:; object-src 'none'; base-uri 'none'; "+
			"form-action 'none'; frame-ancestors "+frameAncestors)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		next.ServeHTTP(w, r)
	})
}

// notFound is the one answer to every link, secret or session that gets
// nothing: guessed, replayed, expired, another chat's, or unauthorized.
func notFound(w http.ResponseWriter) { http.Error(w, "not found", http.StatusNotFound) }

func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if !s.opens.allow(clientKey(r), s.now()) {
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	v, secret := s.links.spend(r.PathValue("token"), s.now())
	if v == nil {
		notFound(w)
		return
	}
	v.log.Info("live view opened")
	writePage(w, secret, v.h.MiniApp)
}

// session wraps an endpoint of an opened page: its secret must name a
// live view (authorized, unless this is the endpoint that authorizes), and
// the session be under its rate.
func (s *Server) session(next func(http.ResponseWriter, *http.Request, *view), needAuth bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		secret := r.Header.Get(sessionHeader)
		v := s.links.session(secret, s.now())
		if v == nil || (needAuth && !v.isAuthorized()) {
			notFound(w)
			return
		}
		if d := digestOf(secret); !s.requests.allow(string(d[:]), s.now()) {
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		next(w, r, v)
	}
}

// serveAuth takes the Mini App's initData (the page reads it from its URL
// fragment, which no server sees): it must be Telegram's, fresh, and name
// the hand-off's user, or in a group one of the bot's admins. A page that
// fails loses its session (the chat's button can give a new link).
func (s *Server) serveAuth(w http.ResponseWriter, r *http.Request, v *view) {
	if !v.h.MiniApp {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInitData+1))
	if err != nil {
		notFound(w)
		return
	}
	d, err := VerifyInitData(s.o.BotToken, string(body), s.now(), InitDataMaxAge)
	if err == nil && d.UserID != v.h.User && !(v.h.Group && s.o.IsAdmin != nil && s.o.IsAdmin(d.UserID)) {
		err = errors.New("initData names another user")
	}
	if err != nil {
		v.log.Warn("live view refused its page's Telegram data", "err", err, "remote", clientKey(r))
		s.links.dropSession(v)
		notFound(w)
		return
	}
	v.authorize()
	v.log.Info("live view's user verified", "user", d.UserID)
	w.WriteHeader(http.StatusNoContent)
}

// serveFrame answers a long poll: the first frame newer than ?after=, as a
// JPEG with its sequence number, the page's size in CSS pixels and URL in
// headers; 204 when none came within pollWait; 404 once the hand-off ended.
func (s *Server) serveFrame(w http.ResponseWriter, r *http.Request, v *view) {
	after, _ := strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
	t, err := v.tab(r.Context())
	if err != nil {
		s.tabFailed(w, v, err)
		return
	}
	if v.frames.since() == 0 {
		v.settle(r.Context(), t, 0, settleStart)
	}
	ctx, cancel := context.WithTimeout(r.Context(), pollWait)
	defer cancel()
	f, seq, ack, ok := v.frames.next(ctx, after)
	if !ok {
		if v.ended() {
			notFound(w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if ack {
		if err := t.AckFrame(r.Context(), f.Ack); err != nil {
			v.log.Debug("live view: ack a frame", "err", err)
		}
	}
	url, err := t.CurrentURL(r.Context())
	if err != nil {
		v.log.Debug("live view: the tab's URL", "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "image/jpeg")
	h.Set("X-Frame-Seq", strconv.FormatUint(seq, 10))
	h.Set("X-Frame-Width", strconv.Itoa(f.Size.X))
	h.Set("X-Frame-Height", strconv.Itoa(f.Size.Y))
	h.Set("X-Page-Url", urlHeader(url))
	w.Write(f.JPEG)
}

// tabFailed answers a request whose tab cannot be reached: 404 once the
// hand-off ended, else 502 (the page says the tab is gone and retries).
func (s *Server) tabFailed(w http.ResponseWriter, v *view, err error) {
	if errors.Is(err, errEnded) {
		notFound(w)
		return
	}
	v.log.Warn("live view cannot reach the tab", "err", err)
	http.Error(w, "the browser tab cannot be reached", http.StatusBadGateway)
}

func (s *Server) serveDone(w http.ResponseWriter, r *http.Request, v *view) {
	s.end(v, OutcomeDone)
	w.WriteHeader(http.StatusNoContent)
}
