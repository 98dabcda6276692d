package mcpclient

import (
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func TestSizeCeilings(t *testing.T) {
	const mib = 1 << 20
	browser := mcpconfig.ServerConfig{Name: "playwright", Command: "npx", URL: "http://127.0.0.1:${port}/mcp", Shared: true,
		Enabled: true, Memory: mcpconfig.Footprint{Fixed: 512 * mib, PerLive: 128 * mib}}
	cdp := browser
	cdp.Memory = mcpconfig.Footprint{Fixed: 128 * mib}
	cmd := func(name string, maxLive int) mcpconfig.ServerConfig {
		return mcpconfig.ServerConfig{Name: name, Command: "node", Enabled: true, MaxLive: maxLive}
	}
	off := cmd("off", 0)
	off.Enabled = false
	url := mcpconfig.ServerConfig{Name: "remote", URL: "https://example.com/mcp", Enabled: true}
	for _, tt := range []struct {
		name    string
		limit   int64
		servers []mcpconfig.ServerConfig
		want    map[string]int
		plan    string
	}{
		{"the soak's 2 GiB", 2048 * mib, []mcpconfig.ServerConfig{browser, cmd("everything", 0)},
			map[string]int{"playwright": 7, "everything": 7},
			"memory budget 2048 MiB, the bot 128 MiB; 7 chats at once — playwright 7 (512 MiB + 128 MiB each), everything 7 (64 MiB each, assumed)"},
		{"the browser alone", 2048 * mib, []mcpconfig.ServerConfig{browser, off, url},
			map[string]int{"playwright": 11, "off": 0, "remote": 0},
			"memory budget 2048 MiB, the bot 128 MiB; 11 chats at once — playwright 11 (512 MiB + 128 MiB each)"},
		{"unknown memory: 2 GiB assumed", 0, []mcpconfig.ServerConfig{browser},
			map[string]int{"playwright": 11},
			"memory budget 2048 MiB (assumed: the memory limit is not known), the bot 128 MiB; 11 chats at once — playwright 11 (512 MiB + 128 MiB each)"},
		{"a browser elsewhere needs no ceiling", 2048 * mib, []mcpconfig.ServerConfig{cdp, cmd("everything", 0)},
			map[string]int{"playwright": 0, "everything": 28},
			"memory budget 2048 MiB, the bot 128 MiB; 28 chats at once — playwright no ceiling (128 MiB), everything 28 (64 MiB each, assumed)"},
		{"set ceilings over the budget", 1024 * mib, []mcpconfig.ServerConfig{browser, cmd("big", 20), cmd("everything", 0)},
			map[string]int{"playwright": 1, "big": 20, "everything": 1},
			"memory budget 1024 MiB, the bot 128 MiB; 1 chat at once (the ceilings set allow more than the budget: the others get 1) — playwright 1 (512 MiB + 128 MiB each), big 20 set (64 MiB each, assumed), everything 1 (64 MiB each, assumed)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, plan := SizeCeilings(tt.servers, tt.limit)
			for _, s := range got {
				if s.MaxLive != tt.want[s.Name] {
					t.Errorf("%s: maxLive %d, want %d", s.Name, s.MaxLive, tt.want[s.Name])
				}
			}
			if s := plan.String(); s != tt.plan {
				t.Errorf("plan:\n%s\nwant:\n%s", s, tt.plan)
			}
			// What the ceilings allow fits the budget, unless the set ones
			// alone do not.
			var used int64 = BotMemory
			for _, c := range plan.Ceilings {
				used += c.Memory.Fixed + int64(c.MaxLive)*c.Memory.PerLive
			}
			if used > plan.Limit && !plan.Over {
				t.Errorf("the ceilings allow %d MiB, over the budget of %d MiB", used>>20, plan.Limit>>20)
			}
			for i := range tt.servers {
				if tt.servers[i].MaxLive != got[i].MaxLive && tt.servers[i].MaxLive != 0 {
					t.Errorf("%s: a ceiling that was set changed", tt.servers[i].Name)
				}
			}
		})
	}
}
