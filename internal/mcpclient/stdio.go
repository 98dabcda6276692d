package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"
)

// stdioEndpoint is a server process speaking MCP on its stdin and stdout.
type stdioEndpoint struct {
	p *stdio.Process
}

var _ endpoint = stdioEndpoint{}

func (s stdioEndpoint) roundTrip(ctx context.Context, m message, deadline time.Time) (reply, error) {
	r, err := s.p.Transport().RoundTrip(ctx, stdio.Request{
		ID: m.id, Method: m.method, Params: m.params, Tool: m.tool, Args: m.args, Meta: m.meta,
	}, deadline)
	if errors.Is(err, stdio.ErrTimeout) {
		err = errCallTimeout
	}
	return reply{result: r.Result, errRaw: r.Error}, err
}

func (s stdioEndpoint) notifyServer(method string, params any) error {
	return s.p.Transport().Notify(method, params)
}

func (s stdioEndpoint) done() bool                    { return s.p.Done() }
func (s stdioEndpoint) waitExit(d time.Duration) bool { return s.p.WaitExit(d) }
func (s stdioEndpoint) exitDescription() string       { return s.p.ExitDescription() }
func (s stdioEndpoint) tailLines() []string           { return s.p.Tail() }
func (s stdioEndpoint) processID() int                { return s.p.PID() }
func (s stdioEndpoint) closeTransport()               { s.p.CloseTransport() }
func (s stdioEndpoint) terminate()                    { s.p.Terminate() }

func (s stdioEndpoint) ending() ending {
	return ending{kind: endExited, reason: "exited (" + s.p.ExitDescription() + ")"}
}

func (s stdioEndpoint) endMessage(server string) string {
	tail := strings.Join(s.p.Tail(), "\n")
	if tail == "" {
		tail = "no stderr output"
	}
	return fmt.Sprintf("%s MCP server exited (%s): %s. It restarts on the next call; browser state was lost.",
		server, s.p.ExitDescription(), tail)
}
