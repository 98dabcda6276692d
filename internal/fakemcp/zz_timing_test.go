package fakemcp_test

import (
	"testing"
	"time"
	"encoding/json"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

func TestZZTiming(t *testing.T) {
	t0 := time.Now()
	w := startWire(t, fakemcp.Command("normal"), t.TempDir())
	w.handshake()
	t.Logf("handshake %v", time.Since(t0))
	t0 = time.Now()
	w.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"big_image","arguments":{}}}`)
	line := <-w.lines
	t.Logf("big_image first %v (%d bytes)", time.Since(t0), len(line))
	t0 = time.Now()
	w.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"big_image","arguments":{}}}`)
	line = <-w.lines
	t.Logf("big_image second %v", time.Since(t0))
	t0 = time.Now()
	var m map[string]json.RawMessage
	json.Unmarshal(line, &m)
	t.Logf("unmarshal %v", time.Since(t0))
	t0 = time.Now()
	w.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"long_text","arguments":{}}}`)
	<-w.lines
	t.Logf("long_text %v", time.Since(t0))
	t0 = time.Now()
	w.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	<-w.lines
	t.Logf("echo %v", time.Since(t0))
	t0 = time.Now()
	x := fakemcp.BigImage()
	t.Logf("local gen %v %d", time.Since(t0), len(x))
}
