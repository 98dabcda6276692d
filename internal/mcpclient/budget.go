package mcpclient

import (
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// The memory budget: every server that runs processes for the chats gets a
// ceiling (maxLive) from the one memory limit of the bot, so that what its
// ceilings allow fits in it together — not the browser alone. Under a 2 GiB
// limit the browser's ceiling used to take the whole budget while every
// other server had none: 45 processes of one server took half the memory
// and the kernel's OOM killer ended a browser's renderers within minutes.
//
// The rule: the bot keeps BotMemory; a ceiling that is set (maxLive,
// PLAYWRIGHT_MAX_BROWSERS) is counted at what it allows; the rest is
// shared by the servers without one so that the same number of chats, N,
// can each have a live process (or session) of every one of them at once:
//
//	N = (limit - BotMemory - set ceilings - fixed costs) / (sum of the per-chat costs), at least 1
//
// A server's costs are its Footprint: the browser preset says its own
// (shared: 512 MiB for the one Chromium and node, 128 MiB a context; a
// browser per chat: 512 MiB each); any other command server is assumed to
// take DefaultServerMemory a process unless its entry says (memoryMiB). A
// server at a URL runs no process here, and a footprint of 0 a chat (a
// browser at a CDP endpoint) needs no ceiling.

// BotMemory is what the budget keeps for the bot itself: ~27 MiB idle,
// its heap growing with the chats and their transcripts, and headroom.
const BotMemory = 128 << 20

// DefaultServerMemory is what one process of a command server is assumed
// to take when its entry does not say (memoryMiB): a Node or Python MCP
// server measures 40–70 MiB of proportional set size
// (@modelcontextprotocol/server-everything 67 MiB).
const DefaultServerMemory = 64 << 20

// DefaultMemoryLimit is the budget assumed when the bot cannot read its
// memory limit (no cgroup limit, no /proc/meminfo: not Linux): a small
// server's.
const DefaultMemoryLimit = 2 << 30

// MemoryPlan is how SizeCeilings shared the budget, for the start-up log.
type MemoryPlan struct {
	Limit    int64 // the memory limit the plan is for (DefaultMemoryLimit when unknown)
	Assumed  bool  // the limit was not known
	Chats    int   // N: the chats that can each have every sized server at once
	Ceilings []Ceiling
	// Over: the ceilings that are set already allow more than the budget
	// (each sized server got 1).
	Over bool
}

// Ceiling is one server's place in the plan.
type Ceiling struct {
	Server  string
	MaxLive int  // 0: none (no process to bound)
	Set     bool // set in the configuration, not sized
	Memory  mcpconfig.Footprint
	Assumed bool // the per-chat cost is DefaultServerMemory
}

// SizeCeilings returns servers with a ceiling from the memory budget for
// every enabled server that runs processes and has none set (see the
// rule above), and the plan. limit is the memory the bot and its servers
// may use (bytes; 0 or less: unknown).
func SizeCeilings(servers []mcpconfig.ServerConfig, limit int64) ([]mcpconfig.ServerConfig, MemoryPlan) {
	plan := MemoryPlan{Limit: limit}
	if limit <= 0 {
		plan.Limit, plan.Assumed = DefaultMemoryLimit, true
	}
	out := make([]mcpconfig.ServerConfig, len(servers))
	copy(out, servers)
	avail := plan.Limit - BotMemory
	var perChat int64
	var sized []int // indexes in out of the servers to size
	for i, s := range out {
		mem, assumed, ok := footprint(s)
		if !ok {
			continue
		}
		avail -= mem.Fixed
		switch {
		case s.MaxLive > 0:
			avail -= int64(s.MaxLive) * mem.PerLive
		case mem.PerLive > 0:
			perChat += mem.PerLive
			sized = append(sized, i)
		}
		plan.Ceilings = append(plan.Ceilings, Ceiling{Server: s.Name, MaxLive: s.MaxLive, Set: s.MaxLive > 0, Memory: mem, Assumed: assumed})
	}
	if perChat > 0 {
		plan.Chats = int(max(avail, 0) / perChat)
		if plan.Chats < 1 {
			plan.Chats, plan.Over = 1, true
		}
	}
	for _, i := range sized {
		out[i].MaxLive = plan.Chats
	}
	for k, c := range plan.Ceilings {
		if !c.Set && c.Memory.PerLive > 0 {
			plan.Ceilings[k].MaxLive = plan.Chats
		}
	}
	return out, plan
}

// footprint is what s costs the budget, whether its per-chat cost is
// DefaultServerMemory, and false for a server that runs no process for
// the chats (disabled, or at a URL).
func footprint(s mcpconfig.ServerConfig) (mem mcpconfig.Footprint, assumed, ok bool) {
	if !s.Enabled || (s.URL != "" && !s.Shared) {
		return mcpconfig.Footprint{}, false, false
	}
	mem = s.Memory
	if mem == (mcpconfig.Footprint{}) {
		if s.Shared {
			mem.Fixed = DefaultServerMemory // one process; its sessions cost nothing known
		} else {
			mem.PerLive, assumed = DefaultServerMemory, true
		}
	}
	return mem, assumed, true
}

// String is the plan for the log: "memory budget 2048 MiB (the bot 128
// MiB): 7 chats at once — playwright 7 (512 MiB + 128 MiB each), everything
// 7 (64 MiB each, assumed)".
func (p MemoryPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory budget %d MiB", p.Limit>>20)
	if p.Assumed {
		b.WriteString(" (assumed: the memory limit is not known)")
	}
	fmt.Fprintf(&b, ", the bot %d MiB", BotMemory>>20)
	if p.Chats > 0 {
		fmt.Fprintf(&b, "; %s at once", plural(p.Chats, "chat"))
	}
	if p.Over {
		b.WriteString(" (the ceilings set allow more than the budget: the others get 1)")
	}
	var parts []string
	for _, c := range p.Ceilings {
		cost := ""
		switch {
		case c.Memory.Fixed > 0 && c.Memory.PerLive > 0:
			cost = fmt.Sprintf("%d MiB + %d MiB each", c.Memory.Fixed>>20, c.Memory.PerLive>>20)
		case c.Memory.PerLive > 0:
			cost = fmt.Sprintf("%d MiB each", c.Memory.PerLive>>20)
		default:
			cost = fmt.Sprintf("%d MiB", c.Memory.Fixed>>20)
		}
		if c.Assumed {
			cost += ", assumed"
		}
		switch {
		case c.Set:
			parts = append(parts, fmt.Sprintf("%s %d set (%s)", c.Server, c.MaxLive, cost))
		case c.MaxLive > 0:
			parts = append(parts, fmt.Sprintf("%s %d (%s)", c.Server, c.MaxLive, cost))
		default:
			parts = append(parts, fmt.Sprintf("%s no ceiling (%s)", c.Server, cost))
		}
	}
	if len(parts) > 0 {
		b.WriteString(" — " + strings.Join(parts, ", "))
	}
	return b.String()
}
