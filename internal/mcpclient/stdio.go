package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"
)

// stdioEndpoint is a server process speaking MCP on its stdin and stdout.
type stdioEndpoint struct {
	p *stdio.Process
}

var _ endpoint = stdioEndpoint{}

func (s stdioEndpoint) roundTrip(ctx context.Context, m message, deadline time.Time) (reply, error) {
	req := stdio.Request{ID: m.id, Method: m.method, Params: m.params, Tool: m.tool, Args: m.args, Meta: m.meta}
	if m.stream {
		r, err := s.p.Transport().Stream(ctx, req)
		return reply{result: r.Result, errRaw: r.Error}, err
	}
	r, err := s.p.Transport().RoundTrip(ctx, req, deadline)
	if errors.Is(err, stdio.ErrTimeout) {
		err = errCallTimeout
	}
	return reply{result: r.Result, errRaw: r.Error}, err
}

func (s stdioEndpoint) notifyServer(method string, params any) error {
	return s.p.Transport().Notify(method, params)
}

// done reports whether the server has ended for the bot: its process
// exited, or its transport failed (it closed its output, wrote a message
// over the limit, stopped reading) — then it is stopped and replaced.
func (s stdioEndpoint) done() bool { return s.p.Done() || s.p.Transport().Err() != nil }

// waitExit waits up to d for the process to exit after a transport
// failure. A failure the server caused while running (a message over the
// limit, no longer reading) is an end known at once; a closed stdout
// usually means an exit, which is waited for, and counts as the end when
// the process lives on.
func (s stdioEndpoint) waitExit(d time.Duration) bool {
	err := s.p.Transport().Err()
	if err != nil && !errors.Is(err, stdio.ErrOutputClosed) && !errors.Is(err, stdio.ErrInputClosed) {
		return true
	}
	return s.p.WaitExit(d) || err != nil
}

func (s stdioEndpoint) exitDescription() string {
	if !s.p.Done() {
		if err := s.p.Transport().Err(); err != nil {
			return err.Error()
		}
	}
	return s.p.ExitDescription()
}

func (s stdioEndpoint) tailLines() []string { return s.p.Tail() }
func (s stdioEndpoint) processID() int      { return s.p.PID() }
func (s stdioEndpoint) closeTransport()     { s.p.CloseTransport() }
func (s stdioEndpoint) terminate()          { s.p.Terminate() }
func (s stdioEndpoint) memory() int64       { return s.p.TreeMemory() }

func (s stdioEndpoint) ending() ending {
	if err := s.p.Transport().Err(); err != nil && !s.p.Done() {
		return ending{kind: endExited, reason: err.Error(), failed: true}
	}
	return ending{kind: endExited, reason: "exited (" + s.p.ExitDescription() + ")"}
}

func (s stdioEndpoint) endMessage(server string, e ending) string {
	if e.failed {
		return fmt.Sprintf("%s MCP server failed: %s. It is stopped and restarts on the next call; browser state was lost.",
			server, e.reason)
	}
	tail := chat.TailText(s.p.Tail(), maxTailBytes)
	if tail == "" {
		tail = "no stderr output"
	}
	return fmt.Sprintf("%s MCP server exited (%s): %s. It restarts on the next call; browser state was lost.",
		server, s.p.ExitDescription(), tail)
}

// maxTailBytes caps the stderr tail in a message for the model or the
// chat: the last lines that fit.
const maxTailBytes = 4 << 10
