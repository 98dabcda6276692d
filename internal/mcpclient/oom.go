package mcpclient

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"
)

// OOMCounter reads how many processes the kernel's OOM killer has ended
// under the bot's memory limit (Options.OOM): the bot's memory cgroup's
// count, or the machine's.
type OOMCounter = stdio.OOMCounter

// FindOOMCounter is the counter of the bot's memory cgroup (a container's
// or a service's), else the machine's.
func FindOOMCounter() (OOMCounter, error) { return stdio.FindOOMCounter() }

// DefaultOOMEvery is how often WatchMemory reads the counter.
const DefaultOOMEvery = 2 * time.Second

// oomRecent is how long after a rise of the counter a server's process
// killed by SIGKILL is taken for its victim (the watcher may read the
// rise before the exit is seen).
const oomRecent = 10 * time.Second

// maxOOMServers bounds the servers an OOM report names.
const maxOOMServers = 5

// oomWatch is the bot's view of the kernel's OOM kills: the log and /mcp
// say when the kernel ended a process of the bot's (a server, a browser's
// renderer) for memory. Safe for concurrent use.
type oomWatch struct {
	counter OOMCounter
	logger  *slog.Logger
	now     func() time.Time

	mu      sync.Mutex
	primed  bool
	last    int64     // the count at the last read
	kills   int64     // since the bot started
	at      time.Time // the last rise
	servers []string  // the servers whose processes were named victims, newest last
}

// prime takes the count as it is as the start: kills before the bot
// started are not its.
func (w *oomWatch) prime() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readLocked()
}

// readLocked reads the counter; it returns how much it rose since the
// last read (0 on the first read, or on an error).
func (w *oomWatch) readLocked() int64 {
	n, err := w.counter.Read()
	if err != nil {
		return 0
	}
	if !w.primed {
		w.primed, w.last = true, n
		return 0
	}
	rose := n - w.last
	w.last = n
	if rose < 0 {
		return 0
	}
	return rose
}

// check reads the counter now. server, when not empty, is a server whose
// process was just killed by SIGKILL, not by the bot: it is the OOM
// killer's when the counter rose now or a moment ago. It reports whether
// server was (or, without one, whether the counter rose).
func (w *oomWatch) check(server string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	rose := w.readLocked()
	now := w.now()
	if rose > 0 {
		w.kills += rose
		w.at = now
	}
	victim := server != "" && !w.at.IsZero() && now.Sub(w.at) <= oomRecent
	if victim {
		w.servers = slices.DeleteFunc(w.servers, func(s string) bool { return s == server })
		w.servers = append(w.servers, server)
		if len(w.servers) > maxOOMServers {
			w.servers = w.servers[len(w.servers)-maxOOMServers:]
		}
	}
	switch {
	case rose > 0 && !w.counter.Machine:
		attrs := []any{"kills", rose, "since_start", w.kills}
		if server != "" && victim {
			attrs = append(attrs, "server", server)
		}
		w.logger.Warn("the kernel's OOM killer ended processes under the bot's memory limit (a server's, such as a browser's renderer): "+
			"the bot goes on; lower the ceilings (maxLive, PLAYWRIGHT_MAX_BROWSERS) or give it more memory", attrs...)
	case victim:
		// The machine's count: a kill is the bot's only when its process
		// died of it.
		if rose > 0 || w.counter.Machine {
			w.logger.Warn("the kernel's OOM killer ended an MCP server's process: the machine is out of memory; the bot goes on",
				"server", server)
		}
	}
	if server != "" {
		return victim
	}
	return rose > 0
}

// status is what /mcp tells of the kills; nil when there is nothing to
// tell (none, or the machine ran out with no server named).
func (w *oomWatch) status() *chat.OOMKills {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at.IsZero() || (w.counter.Machine && len(w.servers) == 0) {
		return nil
	}
	return &chat.OOMKills{Kills: int(w.kills), Machine: w.counter.Machine, Last: w.at, Servers: slices.Clone(w.servers)}
}

// WatchMemory reads the OOM counter (Options.OOM) every interval (default
// DefaultOOMEvery) until ctx ends, and says in the log — and in /mcp —
// when the kernel's OOM killer ended a process under the bot's memory
// limit. Without a counter it returns at once.
func (c *Client) WatchMemory(ctx context.Context, every time.Duration) {
	w := c.oom
	if w == nil {
		return
	}
	if every <= 0 {
		every = DefaultOOMEvery
	}
	w.prime()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check("")
		}
	}
}
