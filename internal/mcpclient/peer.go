package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// peer answers what one live server asks the client, whichever way the
// request comes: on stdio, on an HTTP stream (a call's or the standalone
// GET stream), or inside a 2026-07-28 result that needs input
// (input_required). It also says which capabilities the client declares
// to that server: roots when it has a root, elicitation when its session
// has an Elicitor, sampling when the entry allows it and the session has
// a Sampler.
type peer struct {
	server   string
	root     string        // the folder roots/list names; "": no roots
	elicitor chat.Elicitor // nil: no elicitation
	sampler  chat.Sampler  // nil: no sampling
	// timeout bounds an elicitation (the user's answer) or a sampling:
	// the server's call timeout.
	timeout time.Duration
	logger  *slog.Logger
	// rootsAsked, when set, counts the server's roots/list requests (a
	// shared server asks once per context it opens).
	rootsAsked *atomic.Int32
	// toolsChanged, when set, is told of notifications/tools/list_changed.
	toolsChanged func()
	// listening is the server's listen stream (2026-07-28), told of its
	// acknowledgements and of its end by the server.
	listening atomic.Pointer[listener]

	// life ends the requests still waiting when the server stops.
	life context.Context
	end  context.CancelFunc

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup // the replies sent later (see replyLater); Go under mu while open
	// visits are the URL-mode elicitations being asked, by elicitationId:
	// closed when the server says the interaction finished.
	visits map[string]chan struct{}
}

func newPeer(server, root string, elicitor chat.Elicitor, sampler chat.Sampler, timeout time.Duration, logger *slog.Logger) *peer {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	life, end := context.WithCancel(context.Background())
	return &peer{server: server, root: root, elicitor: elicitor, sampler: sampler, timeout: timeout,
		logger: logger, life: life, end: end}
}

// close ends the waiting requests (they answer cancel) and waits for the
// replies under way.
func (p *peer) close() {
	p.end()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
}

// capabilities is the client's capabilities object for this server.
func (p *peer) capabilities() any {
	caps := map[string]any{}
	if p.root != "" {
		caps["roots"] = map[string]bool{"listChanged": false}
	}
	if p.sampler != nil {
		caps["sampling"] = struct{}{}
	}
	if p.elicitor != nil {
		caps["elicitation"] = map[string]any{"form": struct{}{}, "url": struct{}{}}
	}
	return caps
}

// notified handles a server's notification: a change of its tools is
// passed on, the end of a URL-mode elicitation ends its question, the
// listen stream's own are its listener's; the rest is only logged.
func (p *peer) notified(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		if p.toolsChanged != nil {
			p.toolsChanged()
			return
		}
	case string(mcp.MethodNotificationElicitationComplete):
		p.visited(n)
		return
	case mcp.MethodNotificationSubscriptionsAcknowledged:
		if l := p.listening.Load(); l != nil {
			l.acknowledged(n)
			return
		}
	case string(mcp.MethodNotificationCancelled):
		if l := p.listening.Load(); l != nil && l.serverCancelled(n) {
			return
		}
	}
	p.logger.Debug("MCP notification ignored", "server", p.server, "method", n.Method)
}

// visit registers a URL-mode elicitation being asked: the channel is
// closed when the server reports it complete. done forgets it.
func (p *peer) visit(id string) (completed <-chan struct{}, done func()) {
	if id == "" {
		return nil, func() {}
	}
	ch := make(chan struct{})
	p.mu.Lock()
	if p.visits == nil {
		p.visits = map[string]chan struct{}{}
	}
	if _, dup := p.visits[id]; dup { // the server reused an id: the first keeps it
		p.mu.Unlock()
		return nil, func() {}
	}
	p.visits[id] = ch
	p.mu.Unlock()
	return ch, func() {
		p.mu.Lock()
		if p.visits[id] == ch {
			delete(p.visits, id)
		}
		p.mu.Unlock()
	}
}

// visited handles notifications/elicitation/complete: the question of
// that elicitation, if it is still asked, ends as done. An id the client
// does not know — another server's, or one already answered — is ignored.
func (p *peer) visited(n mcp.JSONRPCNotification) {
	id, _ := n.Params.AdditionalFields["elicitationId"].(string)
	p.mu.Lock()
	ch, ok := p.visits[id]
	if ok {
		delete(p.visits, id)
	}
	p.mu.Unlock()
	if !ok {
		p.logger.Debug("MCP elicitation completion ignored: no such question is open", "server", p.server, "elicitation", id)
		return
	}
	p.logger.Debug("MCP server says the URL elicitation is complete", "server", p.server, "elicitation", id)
	close(ch)
}

// slow reports whether method waits for a person or a model: it is
// answered off the transport's own request handling (see replyLater).
func slow(method string) bool {
	return method == string(mcp.MethodElicitationCreate) || method == string(mcp.MethodSamplingCreateMessage)
}

// serve answers one request: its result, or the JSON-RPC error.
func (p *peer) serve(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
	switch method {
	case string(mcp.MethodPing):
		return json.RawMessage("{}"), nil
	case string(mcp.MethodListRoots):
		if p.root == "" {
			return nil, &RPCError{Code: mcp.METHOD_NOT_FOUND, Message: "this client declares no roots to this server"}
		}
		if p.rootsAsked != nil {
			p.rootsAsked.Add(1)
		}
		return rootsResult(p.root), nil
	case string(mcp.MethodSamplingCreateMessage):
		return p.sample(ctx, params)
	case string(mcp.MethodElicitationCreate):
		return p.elicit(ctx, params)
	}
	return nil, &RPCError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("method %s is not supported by this client", method)}
}

// bounded is ctx ended also by the timeout and the server's stop.
func (p *peer) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	stop := context.AfterFunc(p.life, cancel)
	return ctx, func() { stop(); cancel() }
}

func (p *peer) elicit(ctx context.Context, params json.RawMessage) (json.RawMessage, *RPCError) {
	if p.elicitor == nil {
		return nil, &RPCError{Code: mcp.METHOD_NOT_FOUND, Message: "elicitation is not supported here (no user to ask)"}
	}
	var req struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
	}
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: "invalid elicitation params: " + err.Error()}
	}
	e := chat.Elicitation{Server: p.server, Mode: chat.ElicitMode(req.Mode), Message: req.Message}
	switch e.Mode {
	case "", chat.ElicitForm:
		e.Mode = chat.ElicitForm
		form, err := parseElicitForm(req.RequestedSchema)
		if err != nil {
			p.logger.Warn("MCP elicitation refused: its form cannot be asked", "server", p.server, "err", err)
			return nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: "this client cannot ask that form: " + err.Error()}
		}
		e.Form = form
	case chat.ElicitURL:
		u, err := url.Parse(req.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: "url mode needs an http or https url"}
		}
		e.URL, e.ID = req.URL, req.ElicitationID
		completed, forget := p.visit(req.ElicitationID)
		defer forget()
		e.Completed = completed
	default:
		return nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("unknown elicitation mode %q", req.Mode)}
	}
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	res, err := p.elicitor.Elicit(ctx, e)
	switch {
	case err != nil && ctx.Err() != nil, err == nil && res.Action == "":
		res = chat.ElicitResult{Action: chat.ElicitCancel}
	case err != nil:
		p.logger.Warn("MCP elicitation failed", "server", p.server, "err", err)
		res = chat.ElicitResult{Action: chat.ElicitCancel}
	}
	out := map[string]any{"action": res.Action}
	if res.Action == chat.ElicitAccept && e.Mode == chat.ElicitForm {
		content, err := e.Form.Complete(res.Content)
		if err != nil {
			// The Elicitor checks each answer: this is a bug of ours, not
			// something to send.
			p.logger.Warn("MCP elicitation answer refused", "server", p.server, "err", err)
			out = map[string]any{"action": chat.ElicitCancel}
		} else {
			out["content"] = content
		}
	}
	b, _ := json.Marshal(out)
	return b, nil
}

func (p *peer) sample(ctx context.Context, params json.RawMessage) (json.RawMessage, *RPCError) {
	if p.sampler == nil {
		return nil, &RPCError{Code: mcp.METHOD_NOT_FOUND,
			Message: "sampling is not enabled for this server (its entry needs \"sampling\": true)"}
	}
	req, err := parseSampling(p.server, params)
	if err != nil {
		return nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: "sampling/createMessage: " + err.Error()}
	}
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	res, err := p.sampler.Sample(ctx, req)
	if err != nil {
		code := mcp.INTERNAL_ERROR
		if ctx.Err() != nil {
			code = mcp.REQUEST_INTERRUPTED
		}
		return nil, &RPCError{Code: code, Message: "sampling failed: " + err.Error()}
	}
	return samplingResult(res), nil
}

// handler adapts the peer to a transport's request handler. A request
// that waits for a person or a model is answered off it, by reply (see
// replyLater); ping and roots/list at once.
func (p *peer) handler(reply func(context.Context, *transport.JSONRPCResponse) error) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		params, err := json.Marshal(req.Params)
		if err != nil {
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.INVALID_PARAMS, "invalid params", nil), nil
		}
		if reply != nil && slow(req.Method) {
			p.replyLater(req, params, reply)
			return nil, nil
		}
		return response(req.ID, p.serveLogged(ctx, req.Method, params)), nil
	}
}

// replyLater answers req on a goroutine of the peer's (close waits for
// it): mcp-go's HTTP transport gives a request handler 30 seconds and
// sends its answer within the same, too short for a person. The answer
// goes by reply; the wait ends with the timeout or the server's stop.
func (p *peer) replyLater(req transport.JSONRPCRequest, params json.RawMessage, reply func(context.Context, *transport.JSONRPCResponse) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.wg.Go(func() {
		r := response(req.ID, p.serveLogged(p.life, req.Method, params))
		if err := reply(p.life, r); err != nil && p.life.Err() == nil {
			p.logger.Warn("MCP server request: the answer was not delivered", "server", p.server, "method", req.Method, "err", err)
		}
	})
}

type served struct {
	result json.RawMessage
	err    *RPCError
}

func (p *peer) serveLogged(ctx context.Context, method string, params json.RawMessage) served {
	start := time.Now()
	result, rpcErr := p.serve(ctx, method, params)
	if method != string(mcp.MethodPing) {
		attrs := []any{"server", p.server, "method", method, "elapsed_ms", time.Since(start).Milliseconds()}
		if rpcErr != nil {
			attrs = append(attrs, "err", rpcErr.Message)
		}
		p.logger.Debug("MCP server request answered", attrs...)
	}
	return served{result, rpcErr}
}

func response(id mcp.RequestId, s served) *transport.JSONRPCResponse {
	if s.err != nil {
		return transport.NewJSONRPCErrorResponse(id, s.err.Code, s.err.Message, nil)
	}
	return transport.NewJSONRPCResultResponse(id, s.result)
}

// inputError is a request whose server asked for input (input_required)
// the client could not give: the call fails with the reason, the server is
// fine.
type inputError struct{ reason string }

func (e *inputError) Error() string { return e.reason }

// errInputRounds is a server that keeps asking for input past
// maxInputRounds.
var errInputRounds = &inputError{"the server asked for input more than 10 times in one request"}

// maxInputRounds bounds the retries of one request that needs input.
const maxInputRounds = 10

// fulfil answers the input requests of an input_required result, each as
// if the server had sent it: the responses by the same keys.
func (p *peer) fulfil(ctx context.Context, requests map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(requests))
	for key, raw := range requests {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &inputError{fmt.Sprintf("the server's input request %q is invalid: %v", key, err)}
		}
		if len(r.Params) == 0 {
			r.Params = json.RawMessage("{}")
		}
		s := p.serveLogged(ctx, r.Method, r.Params)
		if s.err != nil {
			return nil, &inputError{fmt.Sprintf("the server asked for input (%s) the client cannot give: %s", r.Method, s.err.Message)}
		}
		out[key] = s.result
	}
	return out, nil
}

// codeURLElicitationRequired is the JSON-RPC error of a request that
// cannot go on until the user completed URL-mode elicitations
// (URLElicitationRequiredError, 2025-11-25); its data lists them.
const codeURLElicitationRequired = -32042

// maxPageRounds bounds how often one tools/call is sent again after the
// user went to the pages its server asked for.
const maxPageRounds = 3

// urlElicitationRequired reports whether err is a URLElicitationRequiredError.
func urlElicitationRequired(err error) (*RPCError, bool) {
	if err == nil {
		return nil, false // the common case, without errors.As's allocation
	}
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) && rpcErr.Code == codeURLElicitationRequired {
		return rpcErr, true
	}
	return nil, false
}

// openPages asks the user to open each page a URLElicitationRequiredError
// names, as the URL-mode elicitation/create it describes (Done, or the
// server's completion, is accept): nil once every one is accepted, when
// the request may be sent again; otherwise why not, as an inputError (the
// server's own error when it names no page).
func (p *peer) openPages(ctx context.Context, e *RPCError) error {
	var data struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	if json.Unmarshal(e.Data, &data) != nil || len(data.Elicitations) == 0 {
		return e
	}
	for _, raw := range data.Elicitations {
		var el struct {
			Mode string `json:"mode"`
			URL  string `json:"url"`
		}
		if json.Unmarshal(raw, &el) != nil || el.Mode != string(chat.ElicitURL) {
			return &inputError{"the server asked for a page to be opened first, in a form this client does not know"}
		}
		host := el.URL
		if u, err := url.Parse(el.URL); err == nil && u.Host != "" {
			host = u.Host
		}
		s := p.serveLogged(ctx, string(mcp.MethodElicitationCreate), raw)
		if s.err != nil {
			return &inputError{fmt.Sprintf("the server needs the user to open a page on %s first: %s", host, s.err.Message)}
		}
		var r struct {
			Action chat.ElicitAction `json:"action"`
		}
		_ = json.Unmarshal(s.result, &r)
		if r.Action != chat.ElicitAccept {
			return &inputError{fmt.Sprintf("the server needs the user to open a page on %s first, and the user answered %s", host, r.Action)}
		}
	}
	return nil
}
