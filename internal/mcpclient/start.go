package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// exitNoticeWindow is how long a failed request waits for the process to
// exit before it is reported as an ordinary failure rather than an exit.
const exitNoticeWindow = 2 * time.Second

// liveServer is a started process with an MCP session on it.
type liveServer struct {
	proc *process
	rpc  *rpc
	dir  string // the working directory, for links in results
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
func openSession(ctx context.Context, sp Spawn, cfg ServerConfig, d sessionDeps) (*liveServer, error) {
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
	s := &liveServer{proc: p, rpc: &rpc{tr: p.tr}, dir: sp.Dir}
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
func (s *liveServer) startError(ctx context.Context, err error, cfg ServerConfig) error {
	var msg string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("%s: no answer within the startup timeout of %s", cfg.Name, fmtSeconds(cfg.StartupTimeout))
	case s.proc.waitExit(exitNoticeWindow):
		msg = fmt.Sprintf("%s: exited (%s) during start-up", cfg.Name, s.proc.exitDescription())
	default:
		msg = fmt.Sprintf("%s: %v", cfg.Name, err)
	}
	if tail := s.proc.tail.snapshot(); len(tail) > 0 {
		msg += "\nstderr:\n" + strings.Join(tail, "\n")
	}
	return errors.New(msg)
}

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}
