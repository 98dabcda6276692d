// Command goclient calls one tool of an MCP server N times through
// volcanicbot's own session connection (internal/mcpclient), the same way
// the bot does, and prints one JSON line, for bench/mcp-call-vs-ts/run.sh:
//
//	goclient [-n N] [-tool echo] [-args '{"text":"hi"}'] -- CMD [ARG...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

func main() {
	n := flag.Int("n", 2000, "timed calls")
	warm := flag.Int("warmup", 100, "untimed calls first")
	tool := flag.String("tool", "echo", "tool name")
	args := flag.String("args", `{"text":"hi"}`, "tool arguments (JSON object)")
	firstTool := flag.String("first-tool", "", "the first call's tool (the cold start), e.g. browser_navigate; default -tool")
	firstArgs := flag.String("first-args", "{}", "the first call's arguments")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: goclient [-n N] [-tool NAME] [-args JSON] -- CMD [ARG...]")
		os.Exit(2)
	}
	first, fargs := *firstTool, json.RawMessage(*firstArgs)
	if first == "" {
		first, fargs = *tool, json.RawMessage(*args)
	}
	if err := run(*n, *warm, *tool, json.RawMessage(*args), first, fargs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run(n, warm int, toolName string, args json.RawMessage, firstName string, firstArgs json.RawMessage, argv []string) error {
	cfg := mcpconfig.ServerConfig{
		Name: "bench", Command: argv[0], Args: argv[1:], Enabled: true,
		StartupTimeout: mcpconfig.DefaultStartupTimeout, CallTimeout: mcpconfig.DefaultCallTimeout,
	}
	// The production environment filter, as the bot uses it.
	env := redact.NewEnvFilter(os.Environ())
	client := mcpclient.New(mcpclient.Options{
		Servers: []mcpconfig.ServerConfig{cfg},
		Env:     env,
	})
	defer client.Close()
	dir, err := os.MkdirTemp("", "goclient-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := client.NewSession(dir, "")
	if err != nil {
		return err
	}
	tool := mcpclient.Tool{Server: "bench", MCPName: toolName, Name: toolName}
	ctx := context.Background()
	callTool := func(tool mcpclient.Tool, args json.RawMessage) error {
		res, err := s.Call(ctx, tool, args)
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("error result: %s", res.Text())
		}
		return nil
	}
	call := func() error { return callTool(tool, args) }

	// The first call spawns the process, negotiates and calls: the cold
	// start (our client has no separate connect step).
	start := time.Now()
	if err := callTool(mcpclient.Tool{Server: "bench", MCPName: firstName, Name: firstName}, firstArgs); err != nil {
		return err
	}
	cold := time.Since(start)
	for range warm {
		if err := call(); err != nil {
			return err
		}
	}
	start = time.Now()
	for range n {
		if err := call(); err != nil {
			return err
		}
	}
	elapsed := time.Since(start)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"client":      "go-volcanicbot",
		"calls":       n,
		"us_per_call": float64(elapsed.Microseconds()) / float64(n),
		"cold_ms":     float64(cold.Microseconds()) / 1000,
	})
}
