package fakemcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Protocol 2026-07-28 sends a server's notifications only to a client that
// asked for them: a subscriptions/listen request names the notifications
// it wants, the server acknowledges it (notifications/subscriptions/
// acknowledged, the first message tagged with the subscription's id, the
// request's id) and sends each notification tagged with that id until the
// client cancels the request or the server ends it. mcp-go's streamable
// HTTP server does so; its stdio server answers subscriptions/listen but
// sends notifications/tools/list_changed to every client, untagged. Over
// stdio in changing mode the fake is strict, as a 2026-07-28 server must
// be: once the client discovered (server/discover), a list_changed goes
// only to the acknowledged subscriptions that asked for the tool list,
// one copy tagged per subscription, and without one is dropped. A client
// that initialized (2025-11-25 and older) gets every one, untagged, as
// before.

// Events of subscriptions/listen, in every mode and on both transports.
const (
	// EventListen is a subscriptions/listen request served: RequestID is
	// its id, Reason "tools" when it asked for the tool list.
	EventListen = "listen"
	// EventListenEnd is its end (the client cancelled it, closed its
	// stream, or the server ended it): RequestID is its id.
	EventListenEnd = "listen-end"
)

// ToolEndListens (changing mode, stdio) ends every open subscription
// from the server's side, as a 2026-07-28 stdio server does: a
// notifications/cancelled naming its request → "ended <n>".
const ToolEndListens = "end_listens"

// listenHooks logs the listen events.
func (f *fake) listenHooks(hooks *server.Hooks) {
	hooks.AddBeforeSubscriptionsListen(func(_ context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		ev := Event{Event: EventListen, RequestID: idText(id)}
		if req.Params.Notifications.ToolsListChanged {
			ev.Reason = "tools"
		}
		f.log.add(ev)
	})
	hooks.AddAfterSubscriptionsListen(func(_ context.Context, id any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		f.log.add(Event{Event: EventListenEnd, RequestID: idText(id)})
	})
}

// subscriptions are a stdio client's: its protocol era and its open
// subscriptions/listen requests, read from its input; applied to the
// output by outputRewriter.
type subscriptions struct {
	mu     sync.Mutex
	modern bool                     // the client discovered: notifications are opt-in
	open   map[string]*subscription // by the request id's JSON text
	order  []string
	// input is mcp-go's input: a subscription the server ends is
	// cancelled there as if by the client, so that its handler returns.
	input io.Writer
}

type subscription struct {
	id    json.RawMessage
	tools bool // it asked for notifications/tools/list_changed
	acked bool // its acknowledgement was written
}

func newSubscriptions(input io.Writer) *subscriptions {
	return &subscriptions{open: map[string]*subscription{}, input: input}
}

var (
	listenMarker   = []byte(`"` + string(mcp.MethodSubscriptionsListen) + `"`)
	discoverMarker = []byte(`"` + string(mcp.MethodServerDiscover) + `"`)
	initMarker     = []byte(`"` + string(mcp.MethodInitialize) + `"`)
	ackMarker      = []byte(`"` + mcp.MethodNotificationSubscriptionsAcknowledged + `"`)
)

// client reads one line of the client's.
func (s *subscriptions) client(line []byte) {
	if !bytes.Contains(line, listenMarker) && !bytes.Contains(line, discoverMarker) && !bytes.Contains(line, initMarker) &&
		!bytes.Contains(line, []byte(mcp.MethodNotificationCancelled)) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Notifications struct {
				ToolsListChanged bool `json:"toolsListChanged"`
			} `json:"notifications"`
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Method {
	case string(mcp.MethodServerDiscover):
		s.modern = true
	case string(mcp.MethodInitialize):
		s.modern = false
	case string(mcp.MethodSubscriptionsListen):
		if len(m.ID) > 0 {
			key := compact(m.ID)
			s.open[key] = &subscription{id: json.RawMessage(key), tools: m.Params.Notifications.ToolsListChanged}
			s.order = append(s.order, key)
		}
	case string(mcp.MethodNotificationCancelled):
		s.closeLocked(compact(m.Params.RequestID))
	}
}

// server rewrites one line the server writes: the lines to write instead.
func (s *subscriptions) server(line []byte) [][]byte {
	switch {
	case bytes.Contains(line, toolsChangedMarker):
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.modern {
			return [][]byte{line}
		}
		var out [][]byte
		for _, key := range s.order {
			if sub := s.open[key]; sub.acked && sub.tools {
				out = append(out, tagged(mcp.MethodNotificationToolsListChanged, sub.id))
			}
		}
		return out
	case bytes.Contains(line, ackMarker):
		var n struct {
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &n) == nil {
			s.mu.Lock()
			if sub := s.open[compact(n.Params.Meta[mcp.MetaKeySubscriptionID])]; sub != nil {
				sub.acked = true
			}
			s.mu.Unlock()
		}
	case bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"error"`)):
		s.mu.Lock()
		if len(s.open) > 0 {
			var r struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &r) == nil && r.Method == "" {
				s.closeLocked(compact(r.ID)) // a subscription's result ends it
			}
		}
		s.mu.Unlock()
	}
	return [][]byte{line}
}

// endAll ends every open subscription: the notifications/cancelled to
// send the client, each; mcp-go's handler of each is cancelled.
func (s *subscriptions) endAll() [][]byte {
	s.mu.Lock()
	var out [][]byte
	var ids []json.RawMessage
	for _, key := range s.order {
		sub := s.open[key]
		out = append(out, append(cancelled(sub.id, "the server ends the subscription"), '\n'))
		ids = append(ids, sub.id)
	}
	s.open, s.order = map[string]*subscription{}, nil
	s.mu.Unlock()
	for _, id := range ids {
		_, _ = s.input.Write(append(cancelled(id, "ended by the server"), '\n'))
	}
	return out
}

func (s *subscriptions) closeLocked(key string) {
	if _, ok := s.open[key]; !ok {
		return
	}
	delete(s.open, key)
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i:i], s.order[i+1:]...)
			break
		}
	}
}

// tagged is a notification line with no params but the subscription id.
func tagged(method string, id json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "method": method,
		"params": map[string]any{"_meta": map[string]json.RawMessage{mcp.MetaKeySubscriptionID: id}}})
	return append(b, '\n')
}

func cancelled(id json.RawMessage, reason string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "method": mcp.MethodNotificationCancelled,
		"params": map[string]any{"requestId": id, "reason": reason}})
	return b
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// endListensTool is ToolEndListens.
func (f *fake) endListensTool() server.ServerTool {
	return server.ServerTool{
		Tool: mcp.NewTool(ToolEndListens, mcp.WithDescription("Ends every open subscriptions/listen stream (stdio).")),
		Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if f.subs == nil || f.out == nil {
				return mcp.NewToolResultError("only over stdio"), nil
			}
			lines := f.subs.endAll()
			for _, l := range lines {
				if err := f.out.writeLine(l); err != nil {
					return nil, err
				}
			}
			return mcp.NewToolResultText("ended " + strconv.Itoa(len(lines))), nil
		},
	}
}
