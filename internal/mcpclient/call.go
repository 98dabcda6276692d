package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// call runs one tool call. Failures of the server become error results; only
// the caller's own cancellation (and ErrClosed) is returned as an error.
//
// A call reads the clock twice: at its start (the call timeout counts from
// there when the server was running, from its start or the wait for it
// otherwise) and in release (the end, for the idle timer and the observer).
func (c *connection) call(ctx context.Context, tool Tool, args json.RawMessage) (res Result, err error) {
	start := time.Now()
	var end time.Time // release's
	defer func() {
		// Every call is counted: one the caller gave up on (/stop, the
		// turn's end, the bot's shutdown) as cancelled.
		outcome := CallOK
		switch {
		case err != nil:
			outcome = CallCancelled
		case res.IsError:
			outcome = CallError
		}
		if end.IsZero() { // no server: release did not run
			end = time.Now()
		}
		c.deps.observer.CallDone(c.cfg.Name, end.Sub(start), outcome)
	}()
	srv, ready, err := c.acquireAt(ctx, start)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return Result{}, err
		}
		return ErrorResult(c.cfg.Name, tool.Name, err.Error()), nil
	}
	defer func() { end = c.release(srv) }()

	var deadline time.Time
	if c.cfg.CallTimeout > 0 {
		deadline = ready.Add(c.cfg.CallTimeout)
	}
	var contexts int32
	if c.cfg.State != nil {
		if contexts, err = c.beforeStateCall(ctx, srv, tool); err != nil {
			return Result{}, context.Cause(ctx)
		}
	}
	stopWatch := c.watch(srv)
	raw, err := srv.rpc.callTool(ctx, tool.MCPName, args, tool.ParamHeaders, deadline)
	stopWatch()
	if c.cfg.State != nil {
		srv.stateGate.Release(1)
	}
	if note := srv.note.Swap(nil); note != nil {
		defer func() {
			if err == nil {
				res.Content = append(res.Content, chat.Part{Kind: chat.TextPart, Text: *note})
			} else {
				srv.note.CompareAndSwap(nil, note) // for the next call
			}
		}()
	}
	if err == nil {
		return c.resultOf(ctx, srv, tool, raw, contexts), nil
	}
	return c.failureOf(ctx, srv, tool, err)
}

// resultOf is what the model gets of a call on srv that returned raw:
// the result mapped, the linked files inlined, bounded. contexts is how
// many contexts the server had opened for the connection before the call
// (State).
func (c *connection) resultOf(ctx context.Context, srv *liveServer, tool Tool, raw json.RawMessage, contexts int32) Result {
	fresh := c.cfg.State != nil && c.freshContext(ctx, srv, tool, contexts)
	if c.cfg.State != nil {
		adoptContext(srv)
	}
	res, err := mapValidResult(c.cfg.Name, tool.Name, raw)
	if err != nil {
		return ErrorResult(c.cfg.Name, tool.Name, fmt.Sprintf("%s: invalid result: %v", tool.Name, err))
	}
	if fresh && !res.IsError {
		res.Content = append(res.Content, chat.Part{Kind: chat.TextPart, Text: "Note: the browser had stopped (it crashed, or was closed) " +
			"and this call ran in a new one: the chat's other tabs are gone, and its cookies and storage were restored only after " +
			"this call. If the page needed a login, repeat the step."})
	}
	if tool.own {
		return res
	}
	// Inlined files count against the cap: as many bytes as the cap
	// has tokens times four, then the cap itself.
	inlineLinkedFiles(&res, srv.dir, c.workspace, c.deps.maxResultTokens*4-len(res.Text()))
	c.bound(&res, tool)
	return res
}

// failureOf is what a call on srv that failed with err returns: an error
// result that says why (the server's error, a bad argument, the timeout,
// a login needed, the process's end), or the caller's own cancellation.
// A process seen to have ended is recorded as ended.
func (c *connection) failureOf(ctx context.Context, srv *liveServer, tool Tool, err error) (Result, error) {
	var rpcErr *RPCError
	var inErr *inputError
	switch {
	case errors.As(err, &rpcErr):
		msg := fmt.Sprintf("%s: %s", tool.Name, rpcErr.Error())
		if c.vanished(tool) {
			msg += fmt.Sprintf(". The %s MCP server no longer offers %s: its tool list changed", c.cfg.Name, tool.MCPName)
		}
		return ErrorResult(c.cfg.Name, tool.Name, c.redact(msg)), nil
	case errors.As(err, &inErr):
		return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s: %s", tool.Name, inErr.reason))), nil
	case errors.Is(err, errCallTimeout) && ctx.Err() == nil:
		msg := fmt.Sprintf("%s timed out after %s", tool.Name, fmtSeconds(c.cfg.CallTimeout))
		if srv.ep.done() { // it stopped reading its input: stopped, replaced by the next call
			c.recordEnd(srv, true)
			msg += ". " + c.exitMessage(srv)
		}
		return ErrorResult(c.cfg.Name, tool.Name, msg), nil
	case errors.As(err, new(*NeedsLoginError)):
		return ErrorResult(c.cfg.Name, tool.Name, err.Error()), nil
	case ctx.Err() != nil:
		if srv.ep.done() { // cut short in the middle of a message: the next call is told
			c.recordEnd(srv, false)
		}
		return Result{}, context.Cause(ctx)
	}
	// A transport failure: the process died, or is about to; the HTTP
	// connection failed.
	if srv.ep.waitExit(exitNoticeWindow) {
		c.recordEnd(srv, true)
		return ErrorResult(c.cfg.Name, tool.Name, c.exitMessage(srv)), nil
	}
	return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s: %v", tool.Name, err))), nil
}

// vanished reports whether the catalogue, refreshed since tool was
// offered, no longer has it.
func (c *connection) vanished(tool Tool) bool {
	cat, ok := c.deps.cache.peek(c.cfg)
	if !ok {
		return false
	}
	for _, t := range cat.Tools {
		if t.MCPName == tool.MCPName {
			return false
		}
	}
	return true
}
