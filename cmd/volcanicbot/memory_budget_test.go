package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// Under a memory limit every server that runs processes for the chats gets
// a ceiling from the same budget as the browser, unless its entry (or
// PLAYWRIGHT_MAX_BROWSERS) sets one: with 2 GiB the bot sized the browser
// alone to 12 contexts (the whole budget) and left every other server
// without a ceiling — 45 server-everything processes, half the memory, an
// OOM in minutes.
func TestEveryServerIsSizedFromTheMemoryBudget(t *testing.T) {
	l := fakemcp.Command(fakemcp.ModeNormal)
	server := func(extra map[string]any) map[string]any {
		e := map[string]any{"command": l.Command, "env": l.Env}
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	for _, tt := range []struct {
		name    string
		servers map[string]any
		extra   []string
		want    map[string]int // each server's ceiling
	}{
		{
			// (2048 - 128 bot - 512 browser) / (128 a context + 64 a process) = 7
			name:    "2 GiB: one budget for the browser and the other server",
			servers: map[string]any{"everything": server(nil)},
			want:    map[string]int{"playwright": 7, "everything": 7},
		},
		{
			// (2048 - 128 - 512) / (128 + 64 + 64) = 5
			name:    "2 GiB: two servers share it too",
			servers: map[string]any{"everything": server(nil), "memory": server(nil)},
			want:    map[string]int{"playwright": 5, "everything": 5, "memory": 5},
		},
		{
			// everything keeps its 10 (640 MiB): (2048 - 128 - 640 - 512) / 128 = 6
			name:    "a server's own maxLive wins, and is counted",
			servers: map[string]any{"everything": server(map[string]any{"maxLive": 10})},
			want:    map[string]int{"playwright": 6, "everything": 10},
		},
		{
			// the browser keeps its 3 (512 + 3×128); (2048 - 128 - 896) / 256 = 4
			name:    "PLAYWRIGHT_MAX_BROWSERS wins; memoryMiB says what a process takes",
			servers: map[string]any{"everything": server(map[string]any{"memoryMiB": 256})},
			extra:   []string{"PLAYWRIGHT_MAX_BROWSERS=3"},
			want:    map[string]int{"playwright": 3, "everything": 4},
		},
		{
			// (4096 - 128 - 512) / 192 = 18
			name:    "4 GiB",
			servers: map[string]any{"everything": server(nil)},
			extra:   []string{"VOLCANIC_MEMORY_LIMIT_MIB=4096"},
			want:    map[string]int{"playwright": 18, "everything": 18},
		},
		{
			name:    "a url server runs no process: no ceiling",
			servers: map[string]any{"remote": map[string]any{"url": "http://127.0.0.1:1/mcp"}},
			want:    map[string]int{"playwright": 11, "remote": 0},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			agent := t.TempDir()
			b, _ := json.Marshal(map[string]any{"mcpServers": tt.servers})
			if err := os.WriteFile(filepath.Join(agent, "settings.json"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			environ := append(baseEnviron(t, agent), "VOLCANIC_MEMORY_LIMIT_MIB=2048", "PLAYWRIGHT_ENABLED=true")
			m, err := NewMain(io.Discard, append(environ, tt.extra...))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			for _, s := range m.mcp.Servers() {
				want, ok := tt.want[s.Name]
				if !ok {
					t.Errorf("unexpected server %s", s.Name)
					continue
				}
				if s.MaxLive != want {
					t.Errorf("%s: maxLive %d, want %d", s.Name, s.MaxLive, want)
				}
			}
		})
	}
}
