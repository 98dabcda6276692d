package mcpclient

// What /mcp shows of a connection: its state now, and what its past
// processes left behind.

// record is what a connection keeps of its processes for /mcp. Its fields
// are guarded by the connection's mu.
type record struct {
	lastErr   string
	tail      []string // stderr tail of the last process stopped on purpose
	exit      *exitRecord
	info      ServerInfo
	pid       int
	starts    int
	evictions int // processes stopped to free a slot for another chat
}

// memory is the live process's tree memory, and whether one runs.
func (c *connection) memory() (int64, bool) {
	c.mu.Lock()
	srv := c.srv
	running := c.state == StateRunning
	c.mu.Unlock()
	if srv == nil || !running {
		return 0, false
	}
	return srv.ep.memory(), true
}

// ConnStatus is a snapshot of a connection for /mcp.
type ConnStatus struct {
	Server   string
	State    State
	PID      int
	Starts   int
	Info     ServerInfo
	LastErr  string
	Tail     []string // the stderr tail of the live process, or of the last one stopped
	InFlight int
	// LastExit and ExitTail are the last process that ended on its own
	// ("exited (3)") and its stderr tail, kept after the next start.
	LastExit string
	ExitTail []string
	// Evictions counts the processes stopped to free a slot for another
	// chat.
	Evictions int
}

func (c *connection) status() ConnStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ConnStatus{Server: c.cfg.Name, State: c.state, Starts: c.rec.starts, Info: c.rec.info,
		LastErr: c.rec.lastErr, InFlight: c.inflight, Tail: c.rec.tail, Evictions: c.rec.evictions}
	if c.srv != nil && c.state == StateRunning && c.srv.ep.done() && isShared(c.srv) {
		// The shared process it is on ended (it exited, or was replaced
		// for not answering): not running, though no call has seen it.
		e := c.srv.ep.ending()
		st.State, st.LastErr = stateOf(e.kind), c.redact(e.reason)
	}
	if c.srv != nil && !(c.rec.exit != nil && c.rec.exit.srv == c.srv) {
		st.Tail = c.srv.ep.tailLines()
		if c.state == StateRunning {
			st.PID = c.rec.pid
		}
	}
	if c.rec.exit != nil {
		st.LastExit, st.ExitTail = c.rec.exit.reason, c.rec.exit.srv.ep.tailLines()
		if c.rec.exit.srv == c.srv || c.srv == nil {
			st.Tail = nil // the same lines: shown once, as the exit's
		}
	}
	return st
}
