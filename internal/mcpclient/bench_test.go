package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

// BenchmarkCallTool measures sequential echo calls through a live session
// connection: against the minimal hand-written server (raw-echo) the
// client's own cost is what remains above the floor; against the mcp-go
// fake, the whole stack. Pinning 2026-07-28 shows the cost of the modern
// protocol's per-request metadata on both ends. raw-echo-cancelable is the
// bot's case: the turn's context can be cancelled (/stop), so a call
// registers a wake-up for its blocked read.
func BenchmarkCallTool(b *testing.B) {
	for _, bc := range []struct {
		name, mode, protocol string
		cancelable           bool
	}{
		{"raw-echo", fakemcp.ModeRawEcho, "", false},
		{"raw-echo-cancelable", fakemcp.ModeRawEcho, "", true},
		{"mcp-go", fakemcp.ModeNormal, "", false},
		{"mcp-go-2026-07-28", fakemcp.ModeNormal, "2026-07-28", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := fakemcp.Command(bc.mode)
			cfg := mcpconfig.ServerConfig{Name: "fake", Command: l.Command, Env: l.EnvRefs(), Enabled: true,
				StartupTimeout: mcpconfig.DefaultStartupTimeout, CallTimeout: mcpconfig.DefaultCallTimeout, ProtocolVersion: bc.protocol}
			env := redact.NewEnvFilter(os.Environ())
			client := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: env})
			defer client.Close()
			s, err := client.NewSession(b.TempDir(), b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			tool := Tool{Server: "fake", MCPName: "echo", Name: "echo"}
			args := []byte(`{"text":"hi"}`)
			ctx := context.Background()
			if bc.cancelable {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			if _, err := s.Call(ctx, tool, args); err != nil { // start outside the timer
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := s.Call(ctx, tool, args)
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
		})
	}
}

// BenchmarkCallToolFloor is the same exchange written by hand on both ends
// over the same pipes: the raw-echo server and a client that writes the
// request line and reads the answer line. No JSON decoding on this side
// beyond finding the line. This is what a call cannot get below.
func BenchmarkCallToolFloor(b *testing.B) {
	l := fakemcp.Command(fakemcp.ModeRawEcho)
	cmd := exec.Command(l.Command)
	cmd.Env = append(os.Environ(), l.Environ()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	r := bufio.NewReaderSize(stdout, 64<<10)
	roundTrip := func(line []byte) []byte {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	roundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"0"}}}` + "\n"))
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	var buf []byte
	id := 0
	b.ReportAllocs()
	for b.Loop() {
		id++
		buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
		buf = strconv.AppendInt(buf, int64(id), 10)
		buf = append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`+"\n"...)
		resp := roundTrip(buf)
		if !bytes.Contains(resp, []byte(`"hi"`)) {
			b.Fatalf("unexpected answer %s", resp)
		}
	}
}
