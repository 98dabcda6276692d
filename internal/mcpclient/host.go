package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// host is the one process of a Shared server (mcpconfig.ServerConfig.Shared):
// started on the first connection of any chat, reached by every chat's
// connection over HTTP, stopped when no connection has used it for the
// server's idle timeout, started again when it died or stopped answering.
// The Client owns it.
type host struct {
	cfg mcpconfig.ServerConfig
	sp  *spawner

	mu       sync.Mutex
	proc     *hostProc     // the process in service, or nil
	starting chan struct{} // non-nil while a start runs; closed when it ends
	idle     *time.Timer
	idleGen  int
	starts   int
	closed   bool
	// replaced is why the last process was taken out of service because
	// it stopped answering, and when (/mcp says so); zero: never.
	replaced   string
	replacedAt time.Time
	wg         sync.WaitGroup // idle stops and the ends of dead or replaced processes

	freePort func() (int, error) // a port for the next start (tests take one)
	// answerWithin bounds a new session's handshake on a process that
	// runs: one that does not answer is replaced.
	answerWithin time.Duration
}

// hostProc is one process of a host and the chats' sessions open on it.
// Once it is taken out of service (it exited, stopped answering, was
// stopped) gone ends, its cause saying why: every request of a session on
// it then fails at once, and the session's next call opens one on the
// host's next process.
type hostProc struct {
	p        *stdio.Process
	url      string // its MCP URL, its port filled in
	hostName string // the Host it accepts (HostEnv), fresh at each start; "" for the URL's
	users    int    // sessions open on it; guarded by the host's mu

	gone    context.Context
	outOfIt context.CancelCauseFunc
}

func newHostProc(p *stdio.Process, addr address) *hostProc {
	gone, out := context.WithCancelCause(context.Background())
	return &hostProc{p: p, url: addr.url, hostName: addr.hostName, gone: gone, outOfIt: out}
}

// outOfService is why hp no longer serves (a *hostGoneError), or nil.
func (hp *hostProc) outOfService() error {
	if hp.gone.Err() == nil {
		if hp.p.Done() {
			return &hostGoneError{reason: "exited (" + hp.p.ExitDescription() + ")"}
		}
		return nil
	}
	return context.Cause(hp.gone)
}

// hostGoneError is why a host's process went out of service: it exited,
// or the bot replaced it (replaced: the sessions on it are told at their
// next call, which runs on the next process).
type hostGoneError struct {
	reason   string // "exited (1)", "stopped answering (no answer to a ping within 5s)"
	replaced bool
}

func (e *hostGoneError) Error() string { return "the shared server " + e.reason }

func newHost(cfg mcpconfig.ServerConfig, sp *spawner) *host {
	return &host{cfg: cfg, sp: sp, freePort: freePort}
}

// errHostClosed is acquire after close.
var errHostClosed = errors.New("the client is closed")

// acquire returns the running process, starting it (or waiting for the
// start under way) when none runs; the caller releases it when its
// connection ends. ctx bounds the start (the startup timeout).
func (h *host) acquire(ctx context.Context) (*hostProc, error) {
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return nil, errHostClosed
		}
		if hp := h.proc; hp != nil && hp.p.Done() {
			h.proc = nil
			hp.outOfIt(&hostGoneError{reason: "exited (" + hp.p.ExitDescription() + ")"})
			h.sp.logger.Warn("shared MCP server exited; it starts again for the next call", "server", h.cfg.Name,
				"pid", hp.p.PID(), "exit", hp.p.ExitDescription(), "stderr_tail", chat.TailText(hp.p.Tail(), maxTailBytes))
			h.wg.Go(hp.p.Terminate) // what is left of its tree
		}
		if hp := h.proc; hp != nil {
			hp.users++
			h.idleGen++ // disarms a pending idle stop
			if h.idle != nil {
				h.idle.Stop()
			}
			h.mu.Unlock()
			return hp, nil
		}
		if wait := h.starting; wait != nil {
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		h.starting = make(chan struct{})
		h.mu.Unlock()

		proc, started, err := h.start(ctx)

		h.mu.Lock()
		close(h.starting)
		h.starting = nil
		if err == nil && h.closed {
			h.mu.Unlock()
			proc.Terminate()
			return nil, errHostClosed
		}
		if err == nil {
			h.proc = newHostProc(proc, started)
			h.starts++
		}
		h.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// release ends one connection's use of hp; the last one on the process in
// service arms the idle stop.
func (h *host) release(hp *hostProc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hp.users--
	if hp != h.proc || hp.users > 0 || h.closed || h.cfg.IdleTimeout <= 0 {
		return
	}
	h.idleGen++
	gen := h.idleGen
	stop := func() { h.idleStop(gen) }
	if h.idle != nil {
		h.idle.Stop()
	}
	h.idle = time.AfterFunc(h.cfg.IdleTimeout, stop)
}

// idleStop stops the process when nothing has used it since generation
// gen was armed.
func (h *host) idleStop(gen int) {
	h.mu.Lock()
	if h.closed || gen != h.idleGen || h.proc == nil || h.proc.users > 0 {
		h.mu.Unlock()
		return
	}
	hp := h.proc
	h.proc = nil
	hp.outOfIt(&hostGoneError{reason: "was stopped after its idle timeout"})
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()
	h.sp.logger.Info("shared MCP server stopped after idle timeout", "server", h.cfg.Name, "pid", hp.p.PID(),
		"idle_s", int(h.cfg.IdleTimeout.Seconds()))
	hp.p.Terminate()
}

// replace takes hp out of service because it stopped answering (why says
// how that was seen): every session on it fails at once, the process is
// stopped in the background, and the next call of any chat starts a new
// one. It reports whether hp was the process in service (a replacement
// already under way, or another process since, makes it a no-op).
func (h *host) replace(hp *hostProc, why string) bool {
	h.mu.Lock()
	if h.closed || h.proc != hp {
		h.mu.Unlock()
		return false
	}
	h.proc = nil
	h.replaced, h.replacedAt = why, time.Now()
	hp.outOfIt(&hostGoneError{reason: why, replaced: true})
	h.wg.Go(hp.p.Terminate)
	users := hp.users
	h.mu.Unlock()
	h.sp.logger.Warn("shared MCP server stopped answering: it is stopped, and the next call of any chat starts a new one",
		"server", h.cfg.Name, "pid", hp.p.PID(), "reason", why, "sessions", users)
	return true
}

// probe checks, for a chat that has no session on it, that the process
// in service still answers: any HTTP answer within d will do (one that no
// longer reads its socket gives none). One that does not is replaced.
func (h *host) probe(d time.Duration) {
	h.mu.Lock()
	hp := h.proc
	h.mu.Unlock()
	if hp == nil || hp.outOfService() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(hp.gone, d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hp.url, nil)
	if err != nil {
		return
	}
	if hp.hostName != "" {
		req.Host = hp.hostName // its own: one that refuses another Host answers too, but need not
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		_ = resp.Body.Close()
		return
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		h.replace(hp, fmt.Sprintf("stopped answering (no answer to a request within %s before a stop)", fmtSeconds(d)))
	}
}

// close stops the process and waits for every clean-up. The connections
// are closed before it.
func (h *host) close() {
	h.mu.Lock()
	h.closed = true
	if h.idle != nil {
		h.idle.Stop()
	}
	hp := h.proc
	h.proc = nil
	h.mu.Unlock()
	if hp != nil {
		hp.outOfIt(&hostGoneError{reason: "was stopped (the bot is stopping)"})
		hp.p.Terminate()
	}
	h.wg.Wait()
}

// status is the running process's pid (0: none), the connections on it
// and the memory of its tree (PSS).
func (h *host) status() (pid, users int, memory int64) {
	h.mu.Lock()
	hp := h.proc
	if hp != nil {
		users = hp.users
	}
	h.mu.Unlock()
	if hp == nil || hp.p.Done() {
		return 0, users, 0
	}
	return hp.p.PID(), users, hp.p.TreeMemory()
}

// lastReplaced is why the last process was replaced, and when; "" when
// none ever was.
func (h *host) lastReplaced() (string, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.replaced, h.replacedAt
}

// portTries is how many ports start tries: a free port may be taken by
// another process before the server binds it.
const portTries = 3

// address is where a started process is reached: its MCP URL and the
// Host its requests carry ("" for the URL's).
type address struct{ url, hostName string }

// start starts the process on a free port and waits until the port takes
// connections, the process exits or ctx ends. A process that exits because
// its port was taken meanwhile (EADDRINUSE) is started again on another.
func (h *host) start(ctx context.Context) (*stdio.Process, address, error) {
	for try := 1; ; try++ {
		p, addr, err := h.startOnce(ctx)
		var taken *portTakenError
		if !errors.As(err, &taken) || try == portTries {
			return p, addr, err
		}
		h.sp.logger.Info("shared MCP server: its port was taken before it listened; trying another", "server", h.cfg.Name,
			"port", taken.port)
	}
}

// portTakenError is a start-up that failed because the port was taken.
type portTakenError struct {
	port int
	err  error
}

func (e *portTakenError) Error() string { return e.err.Error() }

func (h *host) startOnce(ctx context.Context) (*stdio.Process, address, error) {
	port, err := h.freePort()
	if err != nil {
		return nil, address{}, fmt.Errorf("%s: a port for the shared server: %w", h.cfg.Name, err)
	}
	cfg, addr, sp, err := h.prepare(port)
	if err != nil {
		return nil, address{}, err
	}
	p, err := h.sp.startProcess(cfg, sp, nil)
	if err != nil {
		return nil, address{}, err
	}
	if err := h.awaitListen(ctx, p, cfg, port); err != nil {
		return nil, address{}, err
	}
	h.sp.logger.Info("shared MCP server started", "server", cfg.Name, "pid", p.PID(), "url", addr.url)
	return p, addr, nil
}

// prepare is the configuration of a start on port (its URL's, a fresh
// host name in HostEnv), the process it expands to, and where it is
// reached; it makes the working directory and runs BeforeStart.
func (h *host) prepare(port int) (mcpconfig.ServerConfig, address, mcpconfig.Spawn, error) {
	cfg := withPort(h.cfg, port)
	addr := address{url: cfg.URL}
	fail := func(err error) (mcpconfig.ServerConfig, address, mcpconfig.Spawn, error) {
		return mcpconfig.ServerConfig{}, address{}, mcpconfig.Spawn{}, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if cfg.HostEnv != "" {
		var err error
		if addr.hostName, err = h.newHostName(); err != nil {
			return fail(err)
		}
		cfg.Env = maps.Clone(cfg.Env)
		if cfg.Env == nil {
			cfg.Env = map[string]*string{}
		}
		cfg.Env[cfg.HostEnv] = &addr.hostName
	}
	cfg.URL = "" // Expand the process, not the connection
	if err := os.MkdirAll(cfg.Cwd, 0o700); err != nil {
		return fail(err)
	}
	sp, err := cfg.Expand(mcpconfig.Dirs{Workspace: cfg.Cwd}, h.sp.env)
	if err != nil {
		return fail(err)
	}
	if cfg.BeforeStart != nil {
		if err := cfg.BeforeStart(sp); err != nil {
			return fail(err)
		}
	}
	return cfg, addr, sp, nil
}

// awaitListen waits until the started process p listens on port. It
// fails (and ends p) when p exits first, a portTakenError when the port
// was taken, or when ctx ends.
func (h *host) awaitListen(ctx context.Context, p *stdio.Process, cfg mcpconfig.ServerConfig, port int) error {
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	foreign := false // another program listens on the port
	for {
		var d net.Dialer
		dialCtx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := d.DialContext(dialCtx, "tcp", listen)
		cancel()
		if err == nil {
			_ = c.Close()
			// Another program may have taken the port before the server
			// bound it: it is not the server (which then exits, its port
			// taken, or never listens).
			if mine, known := p.Listens(port); mine || !known {
				return nil
			}
			foreign = true
		}
		select {
		case <-p.Exited():
			return exitedDuringStart(p, cfg, port, foreign)
		case <-ctx.Done():
			p.Terminate()
			return abandonedStart(ctx, cfg, listen, foreign)
		case <-tick.C:
		}
	}
}

// exitedDuringStart ends p, which exited before it listened on port, and
// says why, with its stderr: a portTakenError when the port was taken
// (foreign: another program listened on it).
func exitedDuringStart(p *stdio.Process, cfg mcpconfig.ServerConfig, port int, foreign bool) error {
	p.WaitExit(exitNoticeWindow) // its stderr
	msg := fmt.Sprintf("%s: the shared server exited (%s) during start-up", cfg.Name, p.ExitDescription())
	tail := p.Tail()
	if len(tail) > 0 {
		msg += "\nstderr:\n" + chat.TailText(tail, maxTailBytes)
	}
	p.Terminate()
	if foreign || slices.ContainsFunc(tail, func(l string) bool {
		return strings.Contains(l, "EADDRINUSE") || strings.Contains(l, "address already in use")
	}) {
		return &portTakenError{port: port, err: errors.New(msg)}
	}
	return errors.New(msg)
}

// abandonedStart says why a start that waited on listen ended with ctx:
// the startup timeout (foreign: another program listened there), or
// ctx's cause.
func abandonedStart(ctx context.Context, cfg mcpconfig.ServerConfig, listen string, foreign bool) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if foreign {
			return fmt.Errorf("%s: another program listens on %s, the shared server's port, and the server did not "+
				"within the startup timeout of %s", cfg.Name, listen, fmtSeconds(cfg.StartupTimeout))
		}
		return fmt.Errorf("%s: the shared server did not listen on %s within the startup timeout of %s",
			cfg.Name, listen, fmtSeconds(cfg.StartupTimeout))
	}
	return fmt.Errorf("%s: start abandoned: %w", cfg.Name, context.Cause(ctx))
}

// newHostName is a fresh host name for a start (HostEnv): 128 random bits
// under .invalid, which resolves nowhere (RFC 6761; unlike *.localhost,
// which browsers take for the loopback address). It is registered as a
// secret, in upper case too, so that no log, /mcp text or tool result
// shows it (the server names it in its refusals). Nothing rests on its
// secrecy: a page that reads it cannot send it (see docs/security.md).
func (h *host) newHostName() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := "vb-" + hex.EncodeToString(b[:]) + ".invalid"
	if r, ok := h.sp.redactor.(interface{ Add(values ...string) }); ok {
		r.Add(name, strings.ToUpper(name))
	}
	return name, nil
}

// withPort fills ${port} into the command line, env values and URL.
func withPort(cfg mcpconfig.ServerConfig, port int) mcpconfig.ServerConfig {
	p := strconv.Itoa(port)
	fill := func(s string) string { return strings.ReplaceAll(s, "${port}", p) }
	cfg.URL = fill(cfg.URL)
	args := make([]string, len(cfg.Args))
	for i, a := range cfg.Args {
		args[i] = fill(a)
	}
	cfg.Args = args
	if len(cfg.Env) > 0 {
		env := make(map[string]*string, len(cfg.Env))
		for k, v := range cfg.Env {
			if v != nil {
				s := fill(*v)
				v = &s
			}
			env[k] = v
		}
		cfg.Env = env
	}
	return cfg
}

// freePort is a TCP port on 127.0.0.1 nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// A chat's session on a host's process ends with the process: once the
// process is out of service the session is done, and says why.

func (s *sharedEndpoint) done() bool { return s.proc.outOfService() != nil || s.httpEndpoint.done() }

func (s *sharedEndpoint) waitExit(time.Duration) bool { return s.done() }

func (s *sharedEndpoint) exitDescription() string {
	if err := s.proc.outOfService(); err != nil {
		return err.Error()
	}
	return s.httpEndpoint.exitDescription()
}

func (s *sharedEndpoint) ending() ending {
	if err := s.proc.outOfService(); err != nil {
		return ending{kind: endExited, reason: err.Error()}
	}
	return s.httpEndpoint.ending()
}

func (s *sharedEndpoint) endMessage(server string, e ending) string {
	var gone *hostGoneError
	if !errors.As(s.proc.outOfService(), &gone) {
		return s.httpEndpoint.endMessage(server, e)
	}
	if gone.replaced {
		return fmt.Sprintf("The %s MCP server %s during the call and was replaced: the call did not complete, and what the server "+
			"held for the chat (open pages, tabs) is gone. The next call runs in a new one.", server, gone.reason)
	}
	return fmt.Sprintf("The %s MCP server (one process for every chat) %s. It starts again on the next call.", server, gone.reason)
}

// replacedReason is why srv's shared process was replaced by the bot (it
// stopped answering), or "" when it was not.
func replacedReason(srv *liveServer) string {
	sh, ok := srv.ep.(*sharedEndpoint)
	if !ok {
		return ""
	}
	var gone *hostGoneError
	if errors.As(sh.proc.outOfService(), &gone) && gone.replaced {
		return gone.reason
	}
	return ""
}

// inServiceTransport sends a session's requests to a host's process while
// it is in service: a request made after fails at once, and one under way
// (a call's, the session's GET stream) ends when the process goes out of
// service.
type inServiceTransport struct {
	base http.RoundTripper
	proc *hostProc
}

func (t inServiceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.proc.outOfService(); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	stop := context.AfterFunc(t.proc.gone, func() { cancel(context.Cause(t.proc.gone)) })
	end := func() {
		stop()
		cancel(nil)
	}
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		end()
		return nil, err
	}
	resp.Body = &endingBody{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// endingBody is a response body that calls end once it is closed.
type endingBody struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}
