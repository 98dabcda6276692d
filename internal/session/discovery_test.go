package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A turn does not wait for a server's first discovery past DiscoveryWait:
// its first step goes without the server's tools (a call to one is told
// they are not known yet), and once they arrive the next step of the same
// turn offers them.
func TestToolsThatArriveLateJoinTheNextStep(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "open")
	var (
		mu       sync.Mutex
		problems []string
		version  uint64
		e        *env
	)
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	offers := func(req llm.Request, name string) bool {
		return slices.ContainsFunc(req.Tools, func(tool llm.Tool) bool { return tool.Name == name })
	}
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		results := llmtest.LastToolResults(req)
		switch {
		case len(results) == 0:
			if offers(req, fakemcp.ToolEcho) {
				fail("the first step offers echo before the server was discovered")
			}
			return toolCall("e0", fakemcp.ToolEcho, `{"text":"early"}`), nil // expected of the fake, not offered yet
		case results[0].Name == fakemcp.ToolEcho && results[0].CallID == "e0":
			if got := llmtest.ResultText(results[0]); !results[0].IsError ||
				!strings.Contains(got, `there is no tool named "echo"; the tools of the MCP server fake are not known yet`) {
				fail("echo before the discovery answered %q", got)
			}
			// The server answers from now on; its discovery ends while
			// the model thinks.
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				fail("%v", err)
			}
			testkit.Until(20*time.Second, func() bool { return e.mcp.CatalogVersion() != version })
			return toolCall("r1", ReadToolName, `{"path":"nothing-here.txt"}`), nil
		case results[0].Name == ReadToolName:
			if !offers(req, fakemcp.ToolEcho) {
				fail("the step after the discovery ended does not offer echo: %d tools", len(req.Tools))
			}
			return toolCall("e1", fakemcp.ToolEcho, `{"text":"late"}`), nil
		case results[0].Name == fakemcp.ToolEcho:
			if got := llmtest.ResultText(results[0]); got != "late" {
				fail("echo answered %q", got)
			}
		}
		return llm.Response{Text: "done"}, nil
	}
	// The server starts once the gate is open: until then its first
	// discovery runs.
	e = newEnv(t, answer, envOptions{discoveryWait: 200 * time.Millisecond, server: func(cfg *mcpconfig.ServerConfig) {
		cfg.Args = append([]string{"-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"`, gate, cfg.Command}, cfg.Args...)
		cfg.Command = "/bin/sh"
	}})
	mu.Lock()
	version = e.mcp.CatalogVersion()
	mu.Unlock()
	start := time.Now()
	e.deliver(chat.In(50), "go")
	if got := e.chat.waitTexts(t, chat.In(50), 1); got[0] != "done" {
		t.Errorf("answer %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the turn took %v", took)
	}
}
