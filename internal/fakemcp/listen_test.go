package fakemcp_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// modernMeta is the _meta every 2026-07-28 request carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"wire","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications map[string]bool            `json:"notifications"`
		RequestID     json.RawMessage            `json:"requestId"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (w *wire) msg() wireMsg {
	w.t.Helper()
	m := w.recv(10 * time.Second)
	b, _ := json.Marshal(m)
	var out wireMsg
	if err := json.Unmarshal(b, &out); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// call sends tools/call of tool on 2026-07-28 (modern) or after
// initialize.
func (w *wire) call(id int, modern bool, tool, args string) {
	w.t.Helper()
	meta := ""
	if modern {
		meta = "," + modernMeta
	}
	w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, id, tool, args, meta))
}

// On stdio at 2026-07-28 the changing fake sends a list_changed only on a
// subscription that asked for the tool list, once acknowledged, tagged
// with its id; it ends one from its side with notifications/cancelled.
// A client that initialized gets them all, untagged, as before.
func TestListenOverStdio(t *testing.T) {
	t.Parallel()
	log := t.TempDir() + "/log"
	w := startWire(t, fakemcp.Command(fakemcp.ModeChanging).WithLog(log), t.TempDir())
	w.result(1, "server/discover", `{`+modernMeta+`}`)

	w.call(2, true, fakemcp.ToolAddTool, `{"name":"a"}`)
	if m := w.msg(); string(m.ID) != "2" {
		t.Fatalf("without a subscription the client got %+v before the result", m)
	}

	w.send(`{"jsonrpc":"2.0","id":10,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`)
	ack := w.msg()
	if ack.Method != "notifications/subscriptions/acknowledged" || string(ack.Params.Meta["io.modelcontextprotocol/subscriptionId"]) != "10" ||
		!ack.Params.Notifications["toolsListChanged"] {
		t.Fatalf("acknowledgement %+v", ack)
	}
	w.call(3, true, fakemcp.ToolAddTool, `{"name":"b"}`)
	if m := w.msg(); m.Method != "notifications/tools/list_changed" || string(m.Params.Meta["io.modelcontextprotocol/subscriptionId"]) != "10" {
		t.Fatalf("on the subscription the client got %+v", m)
	}
	if m := w.msg(); string(m.ID) != "3" {
		t.Fatalf("then %+v, want the result", m)
	}

	w.call(4, true, fakemcp.ToolEndListens, `{}`)
	got := map[string]bool{}
	for range 3 {
		m := w.msg()
		switch {
		case m.Method == "notifications/cancelled" && string(m.Params.RequestID) == "10":
			got["cancelled"] = true
		case string(m.ID) == "10" && m.Result != nil:
			got["listen result"] = true
		case string(m.ID) == "4":
			got["ended"] = true
		default:
			t.Errorf("unexpected %+v", m)
		}
	}
	if len(got) != 3 {
		t.Errorf("end_listens: got %v", got)
	}
	w.call(5, true, fakemcp.ToolAddTool, `{"name":"c"}`)
	if m := w.msg(); string(m.ID) != "5" {
		t.Fatalf("after the subscription ended the client got %+v", m)
	}
	if ev := fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventListenEnd); len(ev) != 1 || ev[0].RequestID != "10" {
		t.Errorf("listen-end events %+v", ev)
	}

	legacy := startWire(t, fakemcp.Command(fakemcp.ModeChanging), t.TempDir())
	legacy.handshake()
	legacy.call(2, false, fakemcp.ToolAddTool, `{"name":"a"}`)
	if m := legacy.msg(); m.Method != "notifications/tools/list_changed" || m.Params.Meta["io.modelcontextprotocol/subscriptionId"] != nil {
		t.Fatalf("2025-11-25: %+v, want an untagged list_changed", m)
	}
	if m := legacy.msg(); string(m.ID) != "2" {
		t.Fatalf("then %+v", m)
	}
}
