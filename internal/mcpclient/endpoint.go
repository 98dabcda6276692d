package mcpclient

import (
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// exitNoticeWindow is how long a failed request waits for the process to
// exit before it is reported as an ordinary failure rather than an exit.
const exitNoticeWindow = 2 * time.Second

// liveServer is a started server, negotiated and ready for calls: the
// endpoint it runs on and the MCP protocol over it.
type liveServer struct {
	ep   endpoint
	rpc  *rpc
	dir  string // the working directory, for links in results
	slot *slot  // its place under the server's ceiling, if it has one
	// listen is its listen stream for the tool list (2026-07-28), or nil.
	listen *listener
	// restoreFirst: the chat's state is restored before the next call (a
	// Close call ended the server's context for it).
	restoreFirst atomic.Bool
	// stateGate, with StateTools, keeps the chat's calls and the state's
	// saves and restores apart (see state.go).
	stateGate *semaphore.Weighted
	// ownContext is the server's context (contexts' count when it opened)
	// that holds the chat's state: the one it was restored into, or the
	// one the chat's calls opened when it had none saved; 0: none yet.
	// Only that context is saved. adopt: the chat had no state saved, so
	// the context its next call runs in becomes its own.
	ownContext atomic.Int32
	adopt      atomic.Bool
	// note is what the first call on it adds to its result: the chat's
	// last process was taken away (see connection.lostNote).
	note atomic.Pointer[string]
}

// terminate ends the server for good: its listen stream closed, the
// requests it made and still waits on answered (cancel), then its
// endpoint stopped.
func (s *liveServer) terminate() {
	if s.listen != nil {
		s.listen.stop()
	}
	s.rpc.peer.close()
	s.ep.terminate()
	s.rpc.cancels.Wait()
}

// contexts is how many times a shared server asked the connection for its
// roots: once per context (a browser context) it opened for the chat.
func (s *liveServer) contexts() int32 {
	if sh, ok := s.ep.(*sharedEndpoint); ok {
		return sh.rootsAsked.Load()
	}
	return 0
}

// countsContexts reports whether contexts counts anything (a shared
// server's session).
func (s *liveServer) countsContexts() bool {
	_, ok := s.ep.(*sharedEndpoint)
	return ok
}

// endpoint is what a live server runs on: a child process speaking stdio,
// or an HTTP connection to a remote server. It is also the wire its
// messages go over.
type endpoint interface {
	wire
	// done reports whether the endpoint has ended: the process exited, or
	// the HTTP connection failed. The next call starts a new one.
	done() bool
	// waitExit waits up to d for the end after a transport failure and
	// reports whether it came.
	waitExit(d time.Duration) bool
	// exitDescription says how it ended ("1", "signal: killed", the HTTP
	// error).
	exitDescription() string
	// ending says how it ended, for the connection to record.
	ending() ending
	// endMessage is the error a call gets when the endpoint ended under
	// it, for the server named server; e is its ending as first recorded
	// (what stopped it afterwards does not change why it ended).
	endMessage(server string, e ending) string
	// tailLines is the end of the process's stderr (nil for HTTP).
	tailLines() []string
	// processID is the child's pid (0 for HTTP).
	processID() int
	// closeTransport releases the pipes or connections.
	closeTransport()
	// terminate ends it for good: the process tree stopped, the HTTP
	// session deleted. It returns when that is done.
	terminate()
	// memory is the memory of the process tree (PSS, bytes; 0 for HTTP).
	memory() int64
}

// endKind is how an endpoint ended.
type endKind int

const (
	endExited       endKind = iota // the process exited
	endDisconnected                // the HTTP connection (its session) failed
)

// ending is how an endpoint ended: its kind and a short reason ("exited
// (1)", the HTTP error), which the connection keeps as the last error.
// failed says a process's transport failed while it still ran (it closed
// its output, wrote a message over the limit): the reason is that failure,
// not the exit the bot's stop caused afterwards.
type ending struct {
	kind   endKind
	reason string
	failed bool
}
