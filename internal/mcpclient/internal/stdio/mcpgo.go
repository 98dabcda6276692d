package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

var (
	_ transport.Interface              = (*Transport)(nil)
	_ transport.BidirectionalInterface = (*Transport)(nil)
)

// The transport.Interface adapter: mcp-go's client can drive the same
// machinery (TestTransportDrivesMCPGoClient).

// Start is a no-op: the process is started by Start (the package's).
func (t *Transport) Start(context.Context) error { return nil }

func (t *Transport) GetSessionId() string { return "" }

func (t *Transport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.notifyMu.Lock()
	t.onNotify = h
	t.notifyMu.Unlock()
}

func (t *Transport) SetRequestHandler(h transport.RequestHandler) {
	t.notifyMu.Lock()
	t.onReq = h
	t.notifyMu.Unlock()
}

// SendRequest writes req and waits for its response until ctx ends or the
// transport closes. The request's id must be an int64.
func (t *Transport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	id, ok := req.ID.Value().(int64)
	if !ok {
		return nil, fmt.Errorf("request id %v is not an int64", req.ID)
	}
	r, err := t.RoundTrip(ctx, Request{ID: id, Method: req.Method, Params: req.Params}, time.Time{})
	if err != nil {
		return nil, err
	}
	resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: r.Result}
	if r.Error != nil {
		var e mcp.JSONRPCErrorDetails
		if err := json.Unmarshal(r.Error, &e); err != nil {
			e = mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "undecodable error: " + string(r.Error)}
		}
		resp.Error, resp.Result = &e, nil
	}
	return resp, nil
}

// SendNotification writes a notification.
func (t *Transport) SendNotification(_ context.Context, n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return t.writeLine(b)
}
