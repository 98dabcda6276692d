package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Protocol 2026-07-28 has no standalone GET stream, and a server sends a
// notification only to a client that asked for it: the client opens a
// subscriptions/listen request naming the notifications it wants, and the
// server answers with a stream — the POST's SSE response over HTTP, its
// messages on the same pipe over stdio — that starts with
// notifications/subscriptions/acknowledged (saying what it granted) and
// carries the notifications, each tagged with the request's id as the
// subscription id, until the client cancels the request (stdio:
// notifications/cancelled; HTTP: the stream closed) or the server ends it
// (a result; on stdio also notifications/cancelled naming it).

// Bounds of reopening a listen stream that ended while its server lives:
// the first wait, the longest, and how long a stream must have lasted for
// the next wait to start again from the first.
const (
	listenRetryFirst = time.Second
	listenRetryMax   = time.Minute
	listenStable     = time.Minute
)

// listenAckWait bounds how long a start waits for the server to
// acknowledge the stream before the connection is offered to calls (a
// change made by the first call is then not missed).
const listenAckWait = 5 * time.Second

// listenParams opts in to the tool list's changes, the one notification
// the client acts on.
var listenParams = map[string]any{"notifications": map[string]bool{"toolsListChanged": true}}

// Why a listen stream ended, besides the server's stop: the server ended
// it (notifications/cancelled on stdio), or it granted nothing the client
// asked for.
var (
	errListenEnded      = errors.New("the server ended the subscription")
	errListenNotGranted = errors.New("the server granted no notification of the tool list")
)

// streamCloser is a wire whose streams end when their request's context
// does, with no notifications/cancelled (HTTP: the response is closed).
type streamCloser interface{ closesStreams() }

// listen sends subscriptions/listen with id and waits until the stream
// ends: the server's result (nil), its error (an *RPCError: it refuses),
// the wire's failure, or ctx's end (its cause). The stream's
// notifications reach the peer meanwhile. On a wire that does not close
// streams, a cancellation the client chose is told to the server.
func (c *rpc) listen(ctx context.Context, id int64) error {
	params, err := withMeta(listenParams, c.meta)
	if err != nil {
		return err
	}
	r, err := c.tr.roundTrip(ctx, message{id: id, method: string(mcp.MethodSubscriptionsListen), params: params, stream: true}, time.Time{})
	if err != nil {
		if ctx.Err() == nil {
			return err
		}
		cause := context.Cause(ctx)
		if _, closes := c.tr.(streamCloser); !closes && !errors.Is(cause, errListenEnded) {
			c.cancel(id, cause)
		}
		return cause
	}
	_, err = r.decode()
	return err
}

// listener keeps one live server's listen stream open for its tool list:
// opened after the handshake, opened again with a growing wait when it
// ends while the server lives (never at once), and ended with the server
// (stop waits for it). Its notifications/tools/list_changed reach the
// connection's refresh as on the other transports.
type listener struct {
	rpc    *rpc
	ep     endpoint
	server string
	logger *slog.Logger

	ctx      context.Context
	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{} // closed when run returns
	acked    chan struct{} // closed at the first acknowledgement, or when the first stream ended without one
	ackOnce  sync.Once

	mu      sync.Mutex
	id      int64                   // the open stream's request id; 0 between streams
	granted bool                    // the open stream's acknowledgement granted the tool list
	end     context.CancelCauseFunc // ends the open stream
}

// startListener opens srv's listen stream in the background; stop ends it.
func startListener(srv *liveServer, server string, logger *slog.Logger) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{rpc: srv.rpc, ep: srv.ep, server: server, logger: logger, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), acked: make(chan struct{})}
	srv.rpc.peer.listening.Store(l)
	go l.run() // stop waits for it
	return l
}

// waitAcked waits until the server acknowledged the first stream (or it
// ended), at most listenAckWait, or until ctx ends.
func (l *listener) waitAcked(ctx context.Context) {
	t := time.NewTimer(listenAckWait)
	defer t.Stop()
	select {
	case <-l.acked:
	case <-ctx.Done():
	case <-t.C:
		l.logger.Debug("MCP server has not acknowledged the subscription yet", "server", l.server)
	}
}

// stop ends the stream and waits for the listener. Idempotent.
func (l *listener) stop() {
	l.stopOnce.Do(l.cancel)
	<-l.done
}

func (l *listener) releaseAck() { l.ackOnce.Do(func() { close(l.acked) }) }

func (l *listener) run() {
	defer close(l.done)
	defer l.releaseAck()
	wait := listenRetryFirst
	for {
		opened := time.Now()
		granted, err := l.once()
		l.releaseAck()
		var rpcErr *RPCError
		switch {
		case l.ctx.Err() != nil, l.ep.done():
			return
		case errors.As(err, &rpcErr):
			l.logger.Info("MCP server refused subscriptions/listen: its tool list is not followed on this connection",
				"server", l.server, "err", rpcErr.Error())
			return
		case err == nil && !granted:
			l.logger.Debug("MCP server granted no subscription to its tool list", "server", l.server)
			return
		}
		if time.Since(opened) >= listenStable {
			wait = listenRetryFirst
		}
		attrs := []any{"server", l.server, "retry_s", wait.Seconds()}
		if err != nil {
			attrs = append(attrs, "err", err.Error())
		}
		l.logger.Debug("MCP subscription stream ended; it is opened again", attrs...)
		t := time.NewTimer(wait)
		select {
		case <-l.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, listenRetryMax)
	}
}

// once opens one stream and waits for its end: whether its
// acknowledgement granted the tool list, and the error that ended it (nil
// when the server ended it, or it granted nothing).
func (l *listener) once() (granted bool, err error) {
	ctx, end := context.WithCancelCause(l.ctx)
	defer end(nil)
	id := l.rpc.nextID.Add(1)
	l.mu.Lock()
	l.id, l.granted, l.end = id, false, end
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		granted = l.granted
		l.id, l.end = 0, nil
		l.mu.Unlock()
	}()
	err = l.rpc.listen(ctx, id)
	if errors.Is(err, errListenEnded) || errors.Is(err, errListenNotGranted) {
		err = nil
	}
	return false, err
}

// acknowledged reads notifications/subscriptions/acknowledged: of the
// open stream, it says whether the tool list is granted (a stream that
// grants nothing is closed).
func (l *listener) acknowledged(n mcp.JSONRPCNotification) {
	granted := false
	if f, ok := n.Params.AdditionalFields["notifications"].(map[string]any); ok {
		granted, _ = f["toolsListChanged"].(bool)
	}
	l.mu.Lock()
	id, end := l.id, l.end
	mine := id != 0 && sameID(n.Params.Meta[mcp.MetaKeySubscriptionID], id)
	if mine {
		l.granted = granted
	}
	l.mu.Unlock()
	if !mine {
		l.logger.Debug("MCP acknowledgement of an unknown subscription ignored", "server", l.server)
		return
	}
	l.logger.Debug("MCP subscription acknowledged", "server", l.server, "tools", granted)
	if !granted {
		end(errListenNotGranted)
	}
	l.releaseAck()
}

// serverCancelled reads a server's notifications/cancelled (stdio): when
// it names the open stream, the server ended it.
func (l *listener) serverCancelled(n mcp.JSONRPCNotification) bool {
	l.mu.Lock()
	id, end := l.id, l.end
	l.mu.Unlock()
	if id == 0 || !sameID(n.Params.AdditionalFields["requestId"], id) {
		return false
	}
	end(errListenEnded)
	return true
}

// sameID reports whether a decoded JSON-RPC id is id.
func sameID(v any, id int64) bool {
	switch x := v.(type) {
	case float64:
		return x == float64(id)
	case string:
		return x == strconv.FormatInt(id, 10)
	case nil:
		return false
	}
	return fmt.Sprint(v) == strconv.FormatInt(id, 10)
}
