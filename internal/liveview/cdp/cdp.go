// Package cdp is a minimal Chrome DevTools Protocol client over one
// websocket: calls with flattened session ids, events to one callback,
// bounded messages. The live view drives a remote browser's tab with it;
// tests drive their browsers with it too.
package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// maxMessage bounds one message from the browser: a screencast frame
// of at most 1280×1280 at quality 60 is well under 1 MiB of base64.
const maxMessage = 8 << 20

// message is one Chrome DevTools Protocol message either way.
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// ErrClosed is a call's error once the connection to the browser is
// gone: the tab must be reached again.
var ErrClosed = errors.New("the browser connection is closed")

// Conn is one websocket to a browser's DevTools endpoint: calls wait
// for their answers, events go to onEvent (on the reader goroutine, which
// Close waits for; onEvent must not block). Errors name the method, never
// its parameters (text the user types is one).
type Conn struct {
	ws      *websocket.Conn
	onEvent func(method, session string, params json.RawMessage)
	cancel  context.CancelFunc
	done    chan struct{}

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	closed  bool
}

// Dial connects to a DevTools websocket endpoint.
func Dial(ctx context.Context, endpoint string, header http.Header,
	onEvent func(method, session string, params json.RawMessage)) (*Conn, error) {
	ws, _, err := websocket.Dial(ctx, endpoint, &websocket.DialOptions{HTTPHeader: header,
		CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, fmt.Errorf("connect to the browser: %w", err)
	}
	ws.SetReadLimit(maxMessage)
	rctx, cancel := context.WithCancel(context.Background())
	c := &Conn{ws: ws, onEvent: onEvent, cancel: cancel, done: make(chan struct{}), pending: map[int64]chan message{}}
	go c.read(rctx)
	return c, nil
}

func (c *Conn) read(ctx context.Context) {
	defer close(c.done)
	defer c.fail()
	for {
		_, b, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m // buffered
			}
			continue
		}
		if m.Method != "" && c.onEvent != nil {
			c.onEvent(m.Method, m.SessionID, m.Params)
		}
	}
}

// fail ends every waiting call.
func (c *Conn) fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// call sends method (to session, "" for the browser) and decodes its
// result into result (nil: dropped).
func (c *Conn) Call(ctx context.Context, session, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ErrClosed)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := json.Marshal(message{ID: id, Method: method, SessionID: session, Params: p})
	if err == nil {
		err = c.ws.Write(ctx, websocket.MessageText, b)
	}
	if err != nil {
		c.forget(id)
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		switch {
		case !ok:
			return fmt.Errorf("%s: %w", method, ErrClosed)
		case m.Error != nil:
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		case result != nil:
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// notify sends method without waiting for its answer (which the reader
// drops): for calls made from an event handler, on the reader itself.
func (c *Conn) Notify(ctx context.Context, session, method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ErrClosed)
	}
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	b, err := json.Marshal(message{ID: id, Method: method, SessionID: session, Params: p})
	if err == nil {
		err = c.ws.Write(ctx, websocket.MessageText, b)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Close closes the connection and waits for its reader.
func (c *Conn) Close() error {
	err := c.ws.CloseNow()
	c.cancel()
	<-c.done
	return err
}
