package mcpclient

import "time"

// Observer is told what the servers do, for the operator's metrics. Its
// methods are called from the calls' goroutines: they must be cheap and
// safe for concurrent use. Options.Observer; nil: nothing is told.
type Observer interface {
	// ProcessStarted: a chat's process of server started (a connection,
	// for a server at a URL).
	ProcessStarted(server string)
	// StartFailed: it did not.
	StartFailed(server string)
	// Evicted: an idle process was stopped for another chat (the ceiling).
	Evicted(server string)
	// Waited: a call waited d for a slot under the ceiling.
	Waited(server string, d time.Duration)
	// CallDone: a tool call of server took d and ended with outcome.
	CallDone(server string, d time.Duration, outcome CallOutcome)
}

// CallOutcome is how a tool call ended, for the metrics: a small fixed
// set (a label's values).
type CallOutcome string

const (
	// CallOK: the call has a result that is not an error.
	CallOK CallOutcome = "ok"
	// CallError: its result is an error (the server's, a timeout, a
	// crash, a server that could not start).
	CallError CallOutcome = "error"
	// CallCancelled: the caller gave up before the result (/stop, the
	// turn's end, the bot shutting down).
	CallCancelled CallOutcome = "cancelled"
)

type noObserver struct{}

func (noObserver) ProcessStarted(string)                       {}
func (noObserver) StartFailed(string)                          {}
func (noObserver) Evicted(string)                              {}
func (noObserver) Waited(string, time.Duration)                {}
func (noObserver) CallDone(string, time.Duration, CallOutcome) {}

// ServerLoad is one server's processes across every chat, for the
// operator: how many are live and the memory of their process trees (PSS,
// bytes; 0 for servers at a URL). For a Shared server Live counts the
// chats' sessions and Memory is the one process's tree.
type ServerLoad struct {
	Server  string
	Live    int
	Waiting int
	Memory  int64
}

// Load reports every enabled server's live processes and their memory,
// reading /proc for each: call it when asked (a metrics scrape), not per
// call.
func (c *Client) Load() []ServerLoad {
	c.mu.Lock()
	sessions := make([]*Session, 0, len(c.sessions))
	for s := range c.sessions {
		sessions = append(sessions, s)
	}
	c.mu.Unlock()
	out := make([]ServerLoad, 0, len(c.servers))
	for _, cfg := range c.servers {
		if !cfg.Enabled {
			continue
		}
		load := ServerLoad{Server: cfg.Name}
		_, _, load.Waiting = c.Usage(cfg.Name)
		for _, s := range sessions {
			if m, ok := s.conns[cfg.Name].memory(); ok {
				load.Live++
				load.Memory += m
			}
		}
		if h := c.sp.hosts[cfg.Name]; h != nil {
			_, _, load.Memory = h.status() // the chats' sessions share it
		}
		out = append(out, load)
	}
	return out
}

// Memory is the memory of the chat's process of server and its children
// (PSS, bytes), and whether one runs.
func (s *Session) Memory(server string) (int64, bool) {
	conn, ok := s.conns[server]
	if !ok {
		return 0, false
	}
	return conn.memory()
}
