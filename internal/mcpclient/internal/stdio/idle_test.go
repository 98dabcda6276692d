package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// pipeServer is the server end of a transport on pipes: the test writes
// its lines and reads what the client sends.
type pipeServer struct {
	tr  *Transport
	out *os.File // the server's stdout (the transport reads it)
	in  *bufio.Reader
}

func newPipeServer(t *testing.T) *pipeServer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	tr := newTransport(inW, outR, slog.New(slog.DiscardHandler), nil, 0)
	t.Cleanup(func() {
		_ = tr.Close()
		outW.Close()
		inR.Close()
	})
	return &pipeServer{tr: tr, out: outW, in: bufio.NewReader(inR)}
}

func (s *pipeServer) write(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.out, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next is the next message the client wrote, within d.
func (s *pipeServer) next(t *testing.T, d time.Duration) map[string]json.RawMessage {
	t.Helper()
	type got struct {
		line string
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		line, err := s.in.ReadString('\n')
		ch <- got{line, err}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatal(g.err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(g.line), &m); err != nil {
			t.Fatalf("%q: %v", g.line, err)
		}
		return m
	case <-time.After(d):
		t.Fatalf("the client wrote nothing within %s", d)
		return nil
	}
}

// roundTrip makes a call whose answer the server writes at once.
func (s *pipeServer) roundTrip(t *testing.T, id int64) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.tr.RoundTrip(context.Background(), Request{ID: id, Method: "tools/call", Tool: "echo", Args: json.RawMessage(`{}`)}, time.Time{})
		done <- err
	}()
	req := s.next(t, 5*time.Second)
	s.write(t, `{"jsonrpc":"2.0","id":`+string(req["id"])+`,"result":{"content":[]}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Between calls, what the server sends is read and answered at once: a
// ping, a request the handler answers, a notification; and the next call,
// which finds the idle reader reading, still gets its answer.
func TestIdleServerRequestsAreAnswered(t *testing.T) {
	s := newPipeServer(t)
	notified := make(chan string, 1)
	s.tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) { notified <- n.Method })
	s.tr.SetRequestHandler(func(_ context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{"roots":[]}`)), nil
	})
	s.roundTrip(t, 1)

	// No call is in flight now.
	s.write(t, `{"jsonrpc":"2.0","id":"p-1","method":"ping"}`)
	if m := s.next(t, 5*time.Second); string(m["id"]) != `"p-1"` || string(m["result"]) != `{}` {
		t.Errorf("ping answered with %v", m)
	}
	s.write(t, `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`)
	if m := s.next(t, 5*time.Second); string(m["id"]) != `7` || string(m["result"]) != `{"roots":[]}` {
		t.Errorf("roots/list answered with %v", m)
	}
	s.write(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	select {
	case m := <-notified:
		if m != "notifications/tools/list_changed" {
			t.Errorf("notified of %s", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the notification was not read")
	}

	// The idle reader reads now: the next call's answer reaches it
	// through the hand-off, and the call after it reads for itself.
	s.roundTrip(t, 2)
	s.roundTrip(t, 3)
}

// A server that ends its output between calls is left to the exit
// watcher: the transport does not fail by itself, and the next call
// reports the end.
func TestIdleEOFLeftToTheNextCall(t *testing.T) {
	s := newPipeServer(t)
	s.roundTrip(t, 1)
	s.out.Close()
	select {
	case <-s.tr.idleDone: // the idle reader read the end and stopped
	case <-time.After(5 * time.Second):
		t.Fatal("the idle reader did not see the end of the output")
	}
	if err := s.tr.Err(); err != nil {
		t.Fatalf("the transport failed by itself: %v", err)
	}
	_, err := s.tr.RoundTrip(context.Background(), Request{ID: 2, Method: "tools/call", Tool: "echo", Args: json.RawMessage(`{}`)}, time.Now().Add(5*time.Second))
	if err == nil || !strings.Contains(err.Error(), "closed its output") {
		t.Fatalf("the call after the end: %v", err)
	}
}

// A stream (subscriptions/listen) waits for its answer without reading:
// while it is open, what the server sends between calls is still read
// at once by the idle reader, calls read their own answers, and the
// stream gets its answer when it comes, or its context's end.
func TestStreamLeavesReadingToOthers(t *testing.T) {
	s := newPipeServer(t)
	notified := make(chan string, 4)
	s.tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) { notified <- n.Method })
	type answer struct {
		r   Response
		err error
	}
	open := func(ctx context.Context, id int64) <-chan answer {
		done := make(chan answer, 1)
		go func() {
			r, err := s.tr.Stream(ctx, Request{ID: id, Method: "subscriptions/listen", Params: map[string]any{}})
			done <- answer{r, err}
		}()
		if m := s.next(t, 5*time.Second); string(m["method"]) != `"subscriptions/listen"` {
			t.Fatalf("the client wrote %v", m)
		}
		return done
	}
	stream := open(context.Background(), 1)
	if !s.tr.quiet() {
		t.Error("an open stream counts as a call in flight: nothing would read between calls")
	}
	s.write(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	select {
	case m := <-notified:
		if m != "notifications/tools/list_changed" {
			t.Errorf("notified of %s", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing read the notification while the stream was open")
	}
	s.roundTrip(t, 2)
	s.roundTrip(t, 3)
	s.write(t, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`)
	select {
	case a := <-stream:
		if a.err != nil || string(a.r.Result) != `{"resultType":"complete"}` {
			t.Errorf("the stream ended with %s, %v", a.r.Result, a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream's answer was not delivered")
	}

	ctx, cancel := context.WithCancel(context.Background())
	stream = open(ctx, 4)
	cancel()
	select {
	case a := <-stream:
		if !errors.Is(a.err, context.Canceled) {
			t.Errorf("a cancelled stream ended with %v", a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled stream still waits")
	}
	if !s.tr.quiet() || s.tr.streams != 0 {
		t.Errorf("the ended streams are still counted (%d)", s.tr.streams)
	}
}
