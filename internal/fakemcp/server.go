package fakemcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// requestIDHeader carries a tools/call's JSON-RPC id from the BeforeCallTool
// hook to the handler (mcp-go gives handlers no request id).
const requestIDHeader = "X-Fakemcp-Request-Id"

// fake is the mcp-go based server and the state its tools share.
type fake struct {
	modes     map[string]bool
	log       eventLog
	outputDir string
	browser   bool

	mcp *server.MCPServer

	// cancelled maps the id (idText of the decoded JSON value) of each
	// request named by a notifications/cancelled to the client's reason.
	// serve records it before mcp-go sees the notification.
	cancelled sync.Map
	dieOnce   sync.Once

	// changes counts the notifications/tools/list_changed written to
	// stdout (nil over HTTP): changing mode's tools answer only once
	// theirs are out, so the client reads them before the result.
	changes *lineCounter
	// subs are the stdio client's subscriptions (changing mode; nil over
	// HTTP), and out what writes to it.
	subs *subscriptions
	out  *outputRewriter
	// visits are the URL-mode elicitations' pages (mode ask).
	visits visits
}

// lineCounter counts written lines of one kind; wait blocks until a count
// is reached.
type lineCounter struct {
	mu      sync.Mutex
	n       int
	reached chan struct{} // closed and replaced at each count
}

func newLineCounter() *lineCounter { return &lineCounter{reached: make(chan struct{})} }

func (l *lineCounter) add() {
	l.mu.Lock()
	l.n++
	close(l.reached)
	l.reached = make(chan struct{})
	l.mu.Unlock()
}

func (l *lineCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// wait returns once n lines were counted, or ctx ended.
func (l *lineCounter) wait(ctx context.Context, n int) {
	for {
		l.mu.Lock()
		got, ch := l.n, l.reached
		l.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

func newServer(modes map[string]bool, log eventLog, browser bool, outputDir string) *fake {
	f := &fake{modes: modes, log: log, browser: browser, outputDir: outputDir}

	hooks := &server.Hooks{}
	hooks.AddBeforeCallTool(func(_ context.Context, id any, req *mcp.CallToolRequest) {
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set(requestIDHeader, idText(id))
	})
	f.listenHooks(hooks)
	if modes[ModeChanging] {
		hooks.AddAfterListTools(func(context.Context, any, *mcp.ListToolsRequest, *mcp.ListToolsResult) {
			f.log.add(Event{Event: EventList})
		})
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(modes[ModeChanging]),
		server.WithHooks(hooks),
		server.WithToolHandlerMiddleware(f.middleware),
	}
	if modes[ModePaginated] || modes[ModeResources] {
		opts = append(opts, server.WithPaginationLimit(2))
	}
	if modes[ModeResources] {
		opts = append(opts, server.WithResourceCapabilities(false, false))
	}
	f.mcp = server.NewMCPServer(ServerName, ServerVersion, opts...)
	f.mcp.AddTools(f.tools()...)
	if modes[ModeResources] {
		f.addResources()
	}
	if modes[ModeRootsOnInit] {
		f.askRootsOnInit()
	}
	return f
}

// serve runs mcp-go's stdio server between in and out until in ends.
//
// In front of it a reader notes every notifications/cancelled (so slow can
// tell a cancellation from a closed connection); behind it an
// outputRewriter edits what mcp-go cannot express.
func (f *fake) serve(in io.Reader, out io.Writer) error {
	pr, pw := io.Pipe()
	if f.modes[ModeChanging] {
		f.changes = newLineCounter()
		f.subs = newSubscriptions(pw)
	}
	go func() { pw.CloseWithError(f.watchInput(in, pw)) }()

	stdio := server.NewStdioServer(f.mcp)
	stdio.SetErrorLogger(log.New(os.Stderr, "fake: ", 0))
	// Calls run on this pool; enough that parallel slow calls don't queue.
	server.WithWorkerPoolSize(64)(stdio)

	w := &outputRewriter{w: out, changes: f.changes, subs: f.subs}
	f.out = w
	err := stdio.Listen(context.Background(), pr, w)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// watchInput copies lines from in to w, recording the request ids named by
// notifications/cancelled before passing them on.
func (f *fake) watchInput(in io.Reader, w io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if bytes.Contains(line, []byte(mcp.MethodNotificationCancelled)) {
				f.noteCancel(line)
			}
			if f.subs != nil {
				f.subs.client(line)
			}
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (f *fake) noteCancel(line []byte) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID any    `json:"requestId"`
			Reason    string `json:"reason"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || n.Method != string(mcp.MethodNotificationCancelled) || n.Params.RequestID == nil {
		return
	}
	f.cancelled.Store(idText(n.Params.RequestID), n.Params.Reason)
}

// idText renders a decoded JSON-RPC id: 7, or abc for "abc".
func idText(id any) string {
	if f, ok := id.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprint(id)
}

// ended logs why a blocking tool's context ended: cancelled when the client
// sent notifications/cancelled for this request, interrupted otherwise.
func (f *fake) ended(req mcp.CallToolRequest) {
	id := req.Header.Get(requestIDHeader)
	ev := Event{Event: EventInterrupted, Tool: req.Params.Name, RequestID: id}
	if reason, ok := f.cancelled.Load(id); ok {
		ev.Event = EventCancelled
		ev.Reason, _ = reason.(string)
	}
	f.log.add(ev)
}

func (f *fake) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if f.modes[ModeStderrChatter] {
			fmt.Fprintf(os.Stderr, "fake: call %s secret=%s\n", req.Params.Name, os.Getenv(EnvSecret))
		}
		if f.modes[ModeLogCalls] {
			args, _ := json.Marshal(req.Params.Arguments)
			f.log.add(Event{Event: EventCall, Tool: req.Params.Name, Arguments: args})
		}
		res, err := next(ctx, req)
		if f.modes[ModeDieAfterFirstCall] {
			// mcp-go writes the answer right after this returns.
			f.dieOnce.Do(func() {
				time.AfterFunc(200*time.Millisecond, func() {
					fmt.Fprintf(os.Stderr, "dying: %s\n", os.Getenv(EnvDieMessage))
					os.Exit(3)
				})
			})
		}
		return res, err
	}
}

// outputRewriter edits what mcp-go writes, one message (line) at a time:
// it deletes the no_schema tool's inputSchema from tools/list results (mcp-go
// always emits one), and splices big_image's base64 in place of its
// placeholder (mcp-go's nested json.Marshal passes over 8 MB cost seconds
// under the race detector). mcp-go writes one whole message per Write; it
// buffers anyway.
type outputRewriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	changes *lineCounter   // told of each notifications/tools/list_changed written; may be nil
	subs    *subscriptions // applies 2026-07-28's opt-in to the notifications; may be nil
}

// writeLine writes one whole message line of the fake's own.
func (o *outputRewriter) writeLine(line []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.w.Write(line)
	return err
}

var toolsChangedMarker = []byte(`"method":"` + string(mcp.MethodNotificationToolsListChanged) + `"`)

const bigImagePlaceholder = "fakemcp:big-image-placeholder:8c1f0e"

var noSchemaMarker = []byte(`"name":"` + ToolNoSchema + `"`)

func (o *outputRewriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	for {
		i := bytes.IndexByte(o.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := o.buf[:i+1]
		if bytes.Contains(line, noSchemaMarker) {
			line = append(stripSchema(bytes.Clone(line[:i])), '\n')
		}
		if bytes.Contains(line, []byte(bigImagePlaceholder)) {
			line = bytes.Replace(line, []byte(bigImagePlaceholder), bigImageBase64(), 1)
		}
		lines := [][]byte{line}
		if o.subs != nil {
			lines = o.subs.server(line)
		}
		for _, l := range lines {
			if _, err := o.w.Write(l); err != nil {
				return 0, err
			}
		}
		if o.changes != nil && bytes.Contains(line, toolsChangedMarker) {
			o.changes.add() // written, or dropped for want of a subscription
		}
		o.buf = o.buf[i+1:]
		if len(o.buf) == 0 {
			o.buf = nil
		}
	}
}

// stripSchema returns msg without the no_schema tool's inputSchema if msg is
// a tools/list result, else msg unchanged. Schemas of other tools are kept
// as raw bytes, key order included.
func stripSchema(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(m["result"], &result) != nil {
		return msg
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(result["tools"], &tools) != nil {
		return msg
	}
	changed := false
	for _, t := range tools {
		var name string
		if json.Unmarshal(t["name"], &name) == nil && name == ToolNoSchema {
			delete(t, "inputSchema")
			changed = true
		}
	}
	if !changed {
		return msg
	}
	var err error
	if result["tools"], err = json.Marshal(tools); err != nil {
		return msg
	}
	if m["result"], err = json.Marshal(result); err != nil {
		return msg
	}
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}
