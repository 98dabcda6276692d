package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// exitNoticeWindow is how long a failed request waits for the process to
// exit before it is reported as an ordinary failure rather than an exit.
const exitNoticeWindow = 2 * time.Second

// liveServer is an MCP session on a started endpoint.
type liveServer struct {
	ep  endpoint
	rpc *rpc
	dir string // the working directory, for links in results
}

// endpoint is what a session runs on: a child process speaking stdio, or
// an HTTP session with a remote server.
type endpoint interface {
	// done reports whether the endpoint has ended: the process exited, or
	// the HTTP session failed. The next call starts a new one.
	done() bool
	// waitExit waits up to d for the end after a transport failure and
	// reports whether it came.
	waitExit(d time.Duration) bool
	// exitDescription says how it ended ("exit code 1", "signal: killed",
	// the HTTP error).
	exitDescription() string
	// ending is how the connection records the end: the state /mcp shows
	// and the short reason kept as the last error.
	ending() (State, string)
	// endMessage is the error a call gets when the endpoint ended under
	// it, for the server named server.
	endMessage(server string) string
	// tailLines is the end of the process's stderr (nil for HTTP).
	tailLines() []string
	// processID is the child's pid (0 for HTTP).
	processID() int
	// closeTransport releases the pipes or connections.
	closeTransport()
	// terminate ends it for good: the process group killed, the HTTP
	// session deleted. It returns when that is done.
	terminate()
}

type sessionDeps struct {
	logger   *slog.Logger
	redactor Redactor
	client   clientInfo
	onExit   func(*process)
	owner    string
}

// openSession starts sp and negotiates the protocol under ctx (the startup
// timeout). On failure the process is gone when it returns.
func openSession(ctx context.Context, sp mcpconfig.Spawn, cfg mcpconfig.ServerConfig, d sessionDeps) (*liveServer, error) {
	if sp.URL != "" {
		return openHTTPSession(ctx, sp, cfg, d)
	}
	p, err := startProcess(sp, spawnOptions{
		name:        cfg.Name,
		logger:      d.logger,
		stderrLevel: cfg.StderrLevel,
		redactor:    d.redactor,
		onExit:      d.onExit,
		owner:       d.owner,
	})
	if err != nil {
		return nil, err
	}
	s := &liveServer{ep: p, rpc: &rpc{tr: p.tr}, dir: sp.Dir}
	p.tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		d.logger.Debug("MCP notification ignored", "server", cfg.Name, "method", n.Method)
	})
	if err := s.rpc.handshake(ctx, cfg.ProtocolVersion, d.client); err != nil {
		err = s.startError(ctx, err, cfg)
		p.terminate()
		return nil, err
	}
	return s, nil
}

// startError explains a failure during start-up or discovery: a timeout, an
// exit with its code, or the protocol error, each with the stderr tail.
func (s *liveServer) startError(ctx context.Context, err error, cfg mcpconfig.ServerConfig) error {
	var msg string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("%s: no answer within the startup timeout of %s", cfg.Name, fmtSeconds(cfg.StartupTimeout))
	case s.ep.waitExit(exitNoticeWindow):
		msg = fmt.Sprintf("%s: exited (%s) during start-up", cfg.Name, s.ep.exitDescription())
	default:
		msg = fmt.Sprintf("%s: %v", cfg.Name, err)
	}
	if tail := s.ep.tailLines(); len(tail) > 0 {
		msg += "\nstderr:\n" + strings.Join(tail, "\n")
	}
	return errors.New(msg)
}

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}
