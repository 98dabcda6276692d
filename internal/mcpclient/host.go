package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// host is the one process of a Shared server (mcpconfig.ServerConfig.Shared):
// started on the first connection of any chat, reached by every chat's
// connection over HTTP, stopped when no connection has used it for the
// server's idle timeout, started again when it died. The Client owns it.
type host struct {
	cfg mcpconfig.ServerConfig
	sp  *spawner

	mu       sync.Mutex
	proc     *stdio.Process
	url      string        // the process's MCP URL, its port filled in
	hostName string        // the Host it accepts (HostEnv), "" for the URL's
	starting chan struct{} // non-nil while a start runs; closed when it ends
	users    int           // connections open on the process
	idle     *time.Timer
	idleGen  int
	starts   int
	closed   bool
	wg       sync.WaitGroup // idle stops and the ends of dead processes

	freePort func() (int, error) // a port for the next start (tests take one)
}

func newHost(cfg mcpconfig.ServerConfig, sp *spawner) *host {
	return &host{cfg: cfg, sp: sp, freePort: freePort}
}

// errHostClosed is acquire after close.
var errHostClosed = errors.New("the client is closed")

// acquire returns the URL of the running process and the Host its
// requests carry, starting it (or waiting for the start under way) when
// none runs; the caller releases it when its connection ends. ctx bounds
// the start (the startup timeout).
func (h *host) acquire(ctx context.Context) (url, hostName string, err error) {
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return "", "", errHostClosed
		}
		if h.proc != nil && h.proc.Done() {
			dead := h.proc
			h.proc = nil
			h.sp.logger.Warn("shared MCP server exited; it starts again for the next call", "server", h.cfg.Name,
				"pid", dead.PID(), "exit", dead.ExitDescription(), "stderr_tail", capTail(dead.Tail(), maxTailBytes))
			h.wg.Go(dead.Terminate) // what is left of its tree
		}
		if h.proc != nil {
			h.users++
			h.idleGen++ // disarms a pending idle stop
			if h.idle != nil {
				h.idle.Stop()
			}
			url, hostName := h.url, h.hostName
			h.mu.Unlock()
			return url, hostName, nil
		}
		if wait := h.starting; wait != nil {
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return "", "", context.Cause(ctx)
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
			return "", "", errHostClosed
		}
		if err == nil {
			h.proc, h.url, h.hostName = proc, started.url, started.hostName
			h.starts++
		}
		h.mu.Unlock()
		if err != nil {
			return "", "", err
		}
	}
}

// release ends one connection's use; the last one arms the idle stop.
func (h *host) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users--
	if h.users > 0 || h.closed || h.cfg.IdleTimeout <= 0 {
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
	if h.closed || gen != h.idleGen || h.users > 0 || h.proc == nil {
		h.mu.Unlock()
		return
	}
	p := h.proc
	h.proc = nil
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()
	h.sp.logger.Info("shared MCP server stopped after idle timeout", "server", h.cfg.Name, "pid", p.PID(),
		"idle_s", int(h.cfg.IdleTimeout.Seconds()))
	p.Terminate()
}

// close stops the process and waits for every clean-up. The connections
// are closed before it.
func (h *host) close() {
	h.mu.Lock()
	h.closed = true
	if h.idle != nil {
		h.idle.Stop()
	}
	p := h.proc
	h.proc = nil
	h.mu.Unlock()
	if p != nil {
		p.Terminate()
	}
	h.wg.Wait()
}

// status is the running process's pid (0: none), the connections on it
// and the memory of its tree (PSS).
func (h *host) status() (pid, users int, memory int64) {
	h.mu.Lock()
	p, users := h.proc, h.users
	h.mu.Unlock()
	if p == nil || p.Done() {
		return 0, users, 0
	}
	return p.PID(), users, p.TreeMemory()
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
	cfg := withPort(h.cfg, port)
	addr := address{url: cfg.URL}
	if cfg.HostEnv != "" {
		if addr.hostName, err = h.newHostName(); err != nil {
			return nil, address{}, fmt.Errorf("%s: %w", cfg.Name, err)
		}
		cfg.Env = maps.Clone(cfg.Env)
		if cfg.Env == nil {
			cfg.Env = map[string]*string{}
		}
		cfg.Env[cfg.HostEnv] = &addr.hostName
	}
	cfg.URL = "" // Expand the process, not the connection
	if err := os.MkdirAll(cfg.Cwd, 0o700); err != nil {
		return nil, address{}, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	sp, err := cfg.Expand(mcpconfig.Dirs{Workspace: cfg.Cwd}, h.sp.env)
	if err != nil {
		return nil, address{}, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if cfg.BeforeStart != nil {
		if err := cfg.BeforeStart(sp); err != nil {
			return nil, address{}, fmt.Errorf("%s: %w", cfg.Name, err)
		}
	}
	p, err := h.sp.startProcess(cfg, sp, nil)
	if err != nil {
		return nil, address{}, err
	}
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
				h.sp.logger.Info("shared MCP server started", "server", cfg.Name, "pid", p.PID(), "url", addr.url)
				return p, addr, nil
			}
			foreign = true
		}
		select {
		case <-p.Exited():
			p.WaitExit(exitNoticeWindow) // its stderr
			msg := fmt.Sprintf("%s: the shared server exited (%s) during start-up", cfg.Name, p.ExitDescription())
			tail := p.Tail()
			if len(tail) > 0 {
				msg += "\nstderr:\n" + capTail(tail, maxTailBytes)
			}
			p.Terminate()
			if foreign || slices.ContainsFunc(tail, func(l string) bool {
				return strings.Contains(l, "EADDRINUSE") || strings.Contains(l, "address already in use")
			}) {
				return nil, address{}, &portTakenError{port: port, err: errors.New(msg)}
			}
			return nil, address{}, errors.New(msg)
		case <-ctx.Done():
			p.Terminate()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				if foreign {
					return nil, address{}, fmt.Errorf("%s: another program listens on %s, the shared server's port, and the server did not "+
						"within the startup timeout of %s", cfg.Name, listen, fmtSeconds(cfg.StartupTimeout))
				}
				return nil, address{}, fmt.Errorf("%s: the shared server did not listen on %s within the startup timeout of %s",
					cfg.Name, listen, fmtSeconds(cfg.StartupTimeout))
			}
			return nil, address{}, fmt.Errorf("%s: start abandoned: %w", cfg.Name, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// newHostName is a fresh host name for a start (HostEnv): 128 random bits
// under .invalid, which resolves nowhere (RFC 6761; unlike *.localhost,
// which browsers take for the loopback address). It is registered as a
// secret, so that no log, /mcp text or tool result shows it (the server
// names it in its refusals).
func (h *host) newHostName() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := "vb-" + hex.EncodeToString(b[:]) + ".invalid"
	if r, ok := h.sp.redactor.(interface{ Add(values ...string) }); ok {
		r.Add(name)
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
