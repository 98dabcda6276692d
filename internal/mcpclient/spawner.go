package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// spawner starts servers: a configuration expanded for a workspace, its
// process (or HTTP connection) opened and the protocol negotiated. The
// catalogue cache and every chat's connections share the Client's one.
type spawner struct {
	env      mcpconfig.Environment
	redactor Redactor
	logger   *slog.Logger
	client   clientInfo
	owner    string // the owner of the marks; empty: no mark
	tracker  *stdio.Tracker
	auth     *authStore // the url servers' OAuth states
	maxMsg   int        // the largest message a server may send (Options.MaxMessageBytes)

	markOnce sync.Once
	mark     string

	// hosts are the processes of the Shared servers, by name.
	hosts map[string]*host
	// oom says whether the kernel's OOM killer ended a process (nil: not
	// watched); the Client's.
	oom *oomWatch

	// dial opens the endpoint of an expanded configuration; tests replace
	// it to run servers in memory. onExit is called when a process exits;
	// p answers what the server asks.
	dial func(ctx context.Context, cfg mcpconfig.ServerConfig, sp mcpconfig.Spawn, onExit func(), p *peer) (endpoint, error)
}

// asked is what a session answers when its servers ask: the user
// (elicitation) and the model (sampling). The zero value answers nothing
// (a discovery).
type asked struct {
	elicitor chat.Elicitor
	sampler  chat.Sampler
	// toolsChanged is told of the server's notifications/tools/list_changed.
	toolsChanged func()
}

// newPeer is the peer of one start of cfg in workspace.
func (s *spawner) newPeer(cfg mcpconfig.ServerConfig, workspace string, a asked) *peer {
	root := ""
	if cfg.Roots || cfg.Shared {
		root = workspace
	}
	var sampler chat.Sampler
	if cfg.Sampling {
		sampler = a.sampler
	}
	p := newPeer(cfg.Name, root, a.elicitor, sampler, cfg.CallTimeout, s.logger)
	p.toolsChanged = a.toolsChanged
	return p
}

func newSpawner(o Options) *spawner {
	s := &spawner{env: o.Env, redactor: o.Redactor, logger: o.Logger, owner: o.Owner, tracker: o.Tracker,
		client: clientInfo{Name: o.ClientName, Version: o.ClientVersion}, auth: newAuthStore(o.AuthDir),
		maxMsg: o.MaxMessageBytes}
	if s.maxMsg <= 0 {
		s.maxMsg = stdio.DefaultMaxMessageBytes
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With("component", "mcp")
	if s.redactor == nil {
		s.redactor = identity{}
	}
	if s.client.Name == "" {
		s.client.Name = "volcanicbot"
	}
	if s.client.Version == "" {
		s.client.Version = "dev"
	}
	s.dial = s.dialEndpoint
	s.hosts = map[string]*host{}
	for _, cfg := range o.Servers {
		if cfg.Shared {
			h := newHost(cfg, s)
			h.answerWithin = o.PingAfter + o.PingTimeout
			s.hosts[cfg.Name] = h
		}
	}
	return s
}

// start starts cfg for dirs.Workspace (a chat's, or a discovery's
// temporary one) and negotiates under ctx (the startup timeout). On failure
// nothing of it is left running when it returns.
// a is what the session answers when the server asks.
func (s *spawner) start(ctx context.Context, cfg mcpconfig.ServerConfig, dirs mcpconfig.Dirs, onExit func(), a asked) (*liveServer, error) {
	workspace := dirs.Workspace
	if h := s.hosts[cfg.Name]; h != nil && cfg.Shared {
		return s.startShared(ctx, cfg, h, workspace, a)
	}
	p := s.newPeer(cfg, workspace, a)
	sp, err := cfg.Expand(dirs, s.env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if sp.URL == "" {
		if fi, err := os.Stat(sp.Dir); err != nil || !fi.IsDir() {
			// exec reports a missing directory as a missing command.
			return nil, fmt.Errorf("%s: working directory %s does not exist", cfg.Name, sp.Dir)
		}
	}
	if cfg.BeforeStart != nil {
		if err := cfg.BeforeStart(sp); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Name, err)
		}
	}
	ep, err := s.dial(ctx, cfg, sp, onExit, p)
	if err != nil {
		return nil, err
	}
	return s.negotiate(ctx, cfg, ep, sp.Dir, p)
}

// negotiate performs the handshake on a dialled endpoint; on failure the
// endpoint is terminated. p answers the server's requests and says what
// the client declares.
func (s *spawner) negotiate(ctx context.Context, cfg mcpconfig.ServerConfig, ep endpoint, dir string, p *peer) (*liveServer, error) {
	srv := &liveServer{ep: ep, rpc: &rpc{tr: ep, peer: p}, dir: dir}
	if err := srv.rpc.handshake(ctx, cfg.ProtocolVersion, s.client); err != nil {
		err = s.startError(ctx, srv, err, cfg)
		srv.terminate()
		return nil, err
	}
	if h, ok := httpOf(ep); ok {
		h.negotiated(srv.rpc.info.ProtocolVersion)
	}
	if p.toolsChanged != nil && srv.rpc.meta != nil && srv.rpc.toolsListChanged {
		// 2026-07-28: the tool list's changes come only on a listen
		// stream. Its acknowledgement is waited for (briefly), so that a
		// change the first call makes is not missed.
		srv.listen = startListener(srv, cfg.Name, s.logger)
		srv.listen.waitAcked(ctx)
	}
	return srv, nil
}

// startShared opens a chat's session on the server's shared process,
// starting the process if none runs; the session's root is workspace. A
// process that has not opened the session within the host's answerWithin
// (it stopped answering) is replaced for every chat, which ends the
// session's requests at once, and the session is opened on the next one.
func (s *spawner) startShared(ctx context.Context, cfg mcpconfig.ServerConfig, h *host, workspace string, a asked) (*liveServer, error) {
	for try := 1; ; try++ {
		hp, err := h.acquire(ctx)
		if err != nil {
			return nil, err
		}
		if try > 1 { // a new process: the start's own timeout bounds it
			return s.openShared(ctx, cfg, h, hp, workspace, s.newPeer(cfg, workspace, a))
		}
		why := fmt.Sprintf("stopped answering (a chat's new session got no answer within %s)", fmtSeconds(h.answerWithin))
		bound := time.AfterFunc(h.answerWithin, func() { h.replace(hp, why) })
		srv, err := s.openShared(ctx, cfg, h, hp, workspace, s.newPeer(cfg, workspace, a))
		if bound.Stop() || ctx.Err() != nil {
			return srv, err
		}
		if srv != nil { // opened as the process was replaced: on the next one
			srv.terminate()
		}
	}
}

// openShared opens a chat's session on hp, a process of h; its requests
// carry hp's own Host name (the one it alone accepts, fresh at each start).
func (s *spawner) openShared(ctx context.Context, cfg mcpconfig.ServerConfig, h *host, hp *hostProc, workspace string, p *peer) (*liveServer, error) {
	sp := mcpconfig.Spawn{URL: hp.url, Dir: workspace, Host: hp.hostName}
	cfg.URL = hp.url // for messages
	shared := &sharedEndpoint{host: h, proc: hp}
	p.rootsAsked = &shared.rootsAsked
	ep, err := dialHTTP(sp, cfg, s.logger, p, nil, s.maxMsg)
	if err != nil {
		h.release(hp)
		return nil, err
	}
	// Once the process goes out of service (it stopped answering, say),
	// the session's requests end at once, the one in flight included,
	// and nothing more is sent to it (not even the DELETE that ends the
	// session, which a stopped process would leave hanging).
	ep.client.Transport = inServiceTransport{base: ep.client.Transport, proc: hp}
	shared.httpEndpoint = ep
	return s.negotiate(ctx, cfg, shared, workspace, p)
}

// dialEndpoint starts the process of sp, or connects to its URL.
func (s *spawner) dialEndpoint(_ context.Context, cfg mcpconfig.ServerConfig, sp mcpconfig.Spawn, onExit func(), pr *peer) (endpoint, error) {
	if sp.URL != "" {
		return dialHTTP(sp, cfg, s.logger, pr, s.auth, s.maxMsg)
	}
	p, err := s.startProcess(cfg, sp, onExit)
	if err != nil {
		return nil, err
	}
	p.Transport().SetNotificationHandler(pr.notified)
	// Each server request runs on a goroutine of the transport's, which
	// its Close cancels and waits for: all are answered in place.
	p.Transport().SetRequestHandler(pr.handler(nil))
	return stdioEndpoint{p}, nil
}

// startProcess starts the process of sp, marked as this bot's.
func (s *spawner) startProcess(cfg mcpconfig.ServerConfig, sp mcpconfig.Spawn, onExit func()) (*stdio.Process, error) {
	return stdio.Start(stdio.Command{Path: sp.Command, Args: sp.Args, Dir: sp.Dir, Env: sp.Env}, stdio.Options{
		Name:        cfg.Name,
		Logger:      s.logger,
		StderrLevel: cfg.StderrLevel,
		Redact:      s.redactor.Redact,
		OnExit:      onExit,
		Mark:        s.processMark(),
		Tracker:     s.tracker,

		MaxMessageBytes: s.maxMsg,
	})
}

// close stops the shared processes; every connection is closed before.
func (s *spawner) close() {
	var wg sync.WaitGroup
	for _, h := range s.hosts {
		wg.Go(h.close)
	}
	wg.Wait()
}

// processMark is the mark of every process this bot process spawns, read
// once (it needs this process's start time from /proc).
func (s *spawner) processMark() string {
	if s.owner == "" {
		return ""
	}
	s.markOnce.Do(func() { s.mark = stdio.Mark(s.owner) })
	return s.mark
}

// startError explains a failure during start-up or discovery: a timeout
// (for a package runner, that it may still be installing), an exit with
// its code, or the protocol error, each with the stderr tail or, when the
// server wrote none, what to try.
func (s *spawner) startError(ctx context.Context, srv *liveServer, err error, cfg mcpconfig.ServerConfig) error {
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	if nl, ok := needsLogin(err); ok {
		return nl
	}
	if cfg.URL != "" {
		// The URL as configured: an expanded ${env:…} stays out of messages.
		if timedOut {
			return fmt.Errorf("%s: no answer from %s within the startup timeout of %s", cfg.Name, cfg.URL, fmtSeconds(cfg.StartupTimeout))
		}
		return fmt.Errorf("%s: %s: %v", cfg.Name, cfg.URL, err)
	}
	var msg string
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("%s: start abandoned: %w", cfg.Name, context.Cause(ctx))
	case timedOut:
		msg = fmt.Sprintf("%s: no answer within the startup timeout of %s", cfg.Name, fmtSeconds(cfg.StartupTimeout))
		if cfg.Installer() {
			msg += fmt.Sprintf(" (%s may still be downloading or building the package on its first start: try again in a minute, or raise startupTimeoutSeconds)",
				firstWord(cfg.Command))
		}
	case srv.ep.waitExit(exitNoticeWindow):
		msg = fmt.Sprintf("%s: exited (%s) during start-up", cfg.Name, srv.ep.exitDescription())
		if s.oom != nil && srv.ep.exitDescription() == "signal: "+syscall.SIGKILL.String() && s.oom.check(cfg.Name) {
			msg += ": killed by the kernel, out of memory"
		}
	default:
		msg = fmt.Sprintf("%s: %v", cfg.Name, err)
	}
	if tail := srv.ep.tailLines(); len(tail) > 0 {
		msg += "\nstderr:\n" + chat.TailText(tail, maxTailBytes)
	} else if !timedOut {
		msg += fmt.Sprintf("\nThe server wrote nothing to stderr: run `%s` in a shell to see what it says.", commandLine(cfg))
	}
	return errors.New(msg)
}

func firstWord(command string) string {
	if i := strings.LastIndexByte(command, '/'); i >= 0 {
		return command[i+1:]
	}
	return command
}
