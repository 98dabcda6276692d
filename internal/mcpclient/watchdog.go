package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A Shared server's one process serves every chat: when it stops
// answering (a process stopped, a wedged event loop) every chat's calls
// would hang for the whole call timeout, one after the other. It is
// pinged instead, on the calling chat's session, and replaced once it
// does not answer:
//
//   - while a call is in flight, after PingAfter and every PingAfter
//     after that; no answer within PingTimeout replaces the process, which
//     ends the call (and every other chat's call on it) at once;
//   - before a stop of the chat's session (/mcp restart, /new, an idle
//     stop, an eviction, the bot's stop), with stopPingTimeout: a process
//     that does not answer is replaced, and the stop neither saves the
//     chat's state on it nor waits for it.
//
// The chats whose sessions were on it are told at their next call, which
// runs on a new process (the chat's saved state restored).

// Defaults of the Shared servers' pings (Options.PingAfter, PingTimeout).
const (
	DefaultPingAfter   = 5 * time.Second
	DefaultPingTimeout = 5 * time.Second
)

// stopPingTimeout bounds the ping before a stop: /mcp restart answers
// within a few seconds even when the server does not.
const stopPingTimeout = 2 * time.Second

// watch watches the server of srv while a call to it is in flight, when it
// is a Shared server's session: it is pinged after PingAfter and every
// PingAfter after that, and replaced when a ping goes unanswered. stop
// ends the watch and waits for it.
func (c *connection) watch(srv *liveServer) (stop func()) {
	if _, ok := srv.ep.(*sharedEndpoint); !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(c.deps.pingAfter)
		defer t.Stop()
		since := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			why := fmt.Sprintf("stopped answering (no answer to a ping within %s, with a call in flight for %s)",
				fmtSeconds(c.deps.pingTimeout), time.Since(since).Round(time.Second))
			if !c.answers(ctx, srv, c.deps.pingTimeout, why) {
				return
			}
			t.Reset(c.deps.pingAfter)
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// answers pings the Shared server of srv on the chat's session and
// reports whether it answered within d. One that did not is replaced
// (why says how it was found out) for every chat. A ping that failed
// otherwise (the session's connection failed: the call sees it) or that
// ctx ended reports false too, without a replacement.
func (c *connection) answers(ctx context.Context, srv *liveServer, d time.Duration, why string) bool {
	sh, ok := srv.ep.(*sharedEndpoint)
	if !ok || srv.ep.done() {
		return false
	}
	pingCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	_, err := srv.rpc.request(pingCtx, "ping", nil)
	var rpcErr *RPCError
	switch {
	case err == nil, errors.As(err, &rpcErr): // an error answered is an answer
		return true
	case ctx.Err() == nil && errors.Is(pingCtx.Err(), context.DeadlineExceeded):
		sh.host.replace(sh.proc, why)
	}
	return false
}

// probe pings srv's server before a stop, when it is a Shared server's
// session: one that does not answer within stopPingTimeout is replaced,
// and srv is then done (the stop neither saves on it nor waits for it).
func (c *connection) probe(srv *liveServer) {
	c.answers(context.Background(), srv, stopPingTimeout,
		fmt.Sprintf("stopped answering (no answer to a ping within %s before a stop)", fmtSeconds(stopPingTimeout)))
}

// lostNote is what the first call on a new process says when the chat's
// last one was taken away by someone other than the chat (what says who
// and why): what it held in memory is gone.
func (c *connection) lostNote(what string) string {
	msg := "Note: " + what + ", and this call ran in a new one: what it held for this chat (open pages, tabs) is gone"
	if c.cfg.State != nil {
		msg += "; the chat's saved cookies and storage, if any, were restored"
	}
	return msg + ". Open the page again if the task needs it."
}

// noun is what one of the server's processes is to the user.
func (c *connection) noun() string {
	if c.cfg.ProcessNoun != "" {
		return c.cfg.ProcessNoun
	}
	return c.cfg.Name + " MCP server process"
}

// isShared reports whether srv is a session on a Shared server's process.
func isShared(srv *liveServer) bool {
	_, ok := srv.ep.(*sharedEndpoint)
	return ok
}
