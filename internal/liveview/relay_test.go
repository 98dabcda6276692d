package liveview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// fakePump is RunCode for an MCPTarget whose pump is Go: it answers the
// pump's code as @playwright/mcp would after running it, and then speaks
// the relay's protocol as pumpCode does — frames out (each after the last
// was acked), inputs in — until the relay says stop; then it says bye.
type fakePump struct {
	t      *testing.T
	client *http.Client
	wg     sync.WaitGroup

	mu      sync.Mutex
	starts  int
	inputs  []relayCmd
	fail    string // an op the browser refuses
	frames  chan string
	byes    int
	current *pumpConn
}

type pumpConn struct {
	base, key string
	ctx       context.Context    // its requests'
	quit      context.CancelFunc // ends it on its own (its tab closed)
}

var pumpArgs = regexp.MustCompile(`const base = ("[^"]*"), H = \{ 'X-Relay-Key': ("[^"]*") \}`)

func newFakePump(t *testing.T) *fakePump {
	p := &fakePump{t: t, client: &http.Client{Timeout: time.Minute}, frames: make(chan string, 16)}
	t.Cleanup(p.wg.Wait)
	return p
}

func (p *fakePump) run(ctx context.Context, code string) (string, error) {
	m := pumpArgs.FindStringSubmatch(code)
	if m == nil {
		return "", errors.New("not the pump")
	}
	c := &pumpConn{}
	c.ctx, c.quit = context.WithCancel(context.Background())
	json.Unmarshal([]byte(m[1]), &c.base)
	json.Unmarshal([]byte(m[2]), &c.key)
	if st := p.do("POST", c, "/hello", ""); st != http.StatusNoContent {
		return "### Result\n{\"ok\":false}\n", nil
	}
	p.mu.Lock()
	p.starts++
	p.current = c
	p.mu.Unlock()
	p.wg.Add(2)
	go func() { defer p.wg.Done(); p.sendFrames(c) }()
	go func() { defer p.wg.Done(); p.takeInputs(c) }()
	return "### Result\n{\"ok\":true}\n### Ran Playwright code\n", nil
}

func (p *fakePump) do(method string, c *pumpConn, path, body string) int {
	st, _ := p.doBody(method, c, path, body)
	return st
}

func (p *fakePump) doBody(method string, c *pumpConn, path, body string) (int, []byte) {
	ctx := c.ctx
	if path == "/bye" {
		ctx = context.Background()
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	req.Header.Set("X-Relay-Key", c.key)
	req.Header.Set("X-Frame-Width", "390")
	req.Header.Set("X-Frame-Height", "700")
	req.Header.Set("X-Frame-Url", "https%3A%2F%2Fsite.test%2F%C3%A9")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// sendFrames posts each frame put on p.frames, then waits for its ack.
func (p *fakePump) sendFrames(c *pumpConn) {
	for {
		var f string
		select {
		case f = <-p.frames:
		case <-c.ctx.Done():
			return
		}
		st, seq := p.doBody("POST", c, "/frame", f)
		if st != http.StatusOK {
			return
		}
		for {
			st := p.do("GET", c, "/ack?seq="+string(seq), "")
			if st == http.StatusNoContent {
				break
			}
			if st != http.StatusAccepted {
				return
			}
		}
	}
}

// takeInputs does the relay's inputs until it says stop (or c quits).
func (p *fakePump) takeInputs(c *pumpConn) {
	defer c.quit() // its frames too
	defer p.do("POST", c, "/bye", "")
	for {
		if c.ctx.Err() != nil {
			return
		}
		st, b := p.doBody("GET", c, "/next", "")
		if st == http.StatusNoContent {
			continue
		}
		if st != http.StatusOK {
			p.mu.Lock()
			p.byes++
			p.mu.Unlock()
			return
		}
		var cmd relayCmd
		json.Unmarshal(b, &cmd)
		p.mu.Lock()
		p.inputs = append(p.inputs, cmd)
		ok := cmd.Op != p.fail
		p.mu.Unlock()
		p.do("POST", c, "/done", fmt.Sprintf(`{"id":%d,"ok":%t}`, cmd.ID, ok))
	}
}

func (p *fakePump) ops() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s []string
	for _, c := range p.inputs {
		switch c.Op {
		case "text":
			s = append(s, "text "+c.Text)
		case "key":
			s = append(s, "key "+c.Key)
		default:
			s = append(s, fmt.Sprintf("%s %g,%g %g,%g", c.Op, c.X, c.Y, c.DX, c.DY))
		}
	}
	return strings.Join(s, "; ")
}

// collector gathers an MCPTarget's frames.
type collector struct {
	mu  sync.Mutex
	got []Frame
}

func (c *collector) on(f Frame) { c.mu.Lock(); c.got = append(c.got, f); c.mu.Unlock() }
func (c *collector) n() int     { c.mu.Lock(); defer c.mu.Unlock(); return len(c.got) }
func (c *collector) last() Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[len(c.got)-1]
}

// TestMCPTargetPumpRelays: with the pump running, frames come from it one
// at a time (the next only after the view acked the last), with their size
// and the tab's URL; inputs go to it in order, their values whole; a
// refused input fails without its text; the end stops the pump (it says
// bye) and closes the relay's port.
func TestMCPTargetPumpRelays(t *testing.T) {
	p := newFakePump(t)
	tab := NewMCPTarget(p.run)
	t.Cleanup(func() { tab.Close() }) // before the pump's goroutines are waited for
	var frames collector
	if err := tab.StartScreencast(context.Background(), screencast, frames.on); err != nil || tab.relayed() == nil {
		t.Fatalf("start: %v, relay %v", err, tab.relayed() != nil)
	}
	p.frames <- "jpeg a"
	p.frames <- "jpeg b"
	testkit.WaitFor(t, "the first frame", 5*time.Second, func() bool { return frames.n() == 1 })
	if f := frames.last(); string(f.JPEG) != "jpeg a" || f.Size.X != 390 || f.Size.Y != 700 || f.Ack != 1 {
		t.Fatalf("first frame %q %v #%d", f.JPEG, f.Size, f.Ack)
	}
	if u, _ := tab.CurrentURL(context.Background()); u != "https://site.test/é" {
		t.Fatalf("CurrentURL %q", u)
	}
	if time.Sleep(300 * time.Millisecond); frames.n() != 1 { // an unacked frame holds the next back
		t.Fatalf("%d frames before the ack", frames.n())
	}
	tab.AckFrame(context.Background(), 1)
	testkit.WaitFor(t, "the second frame after the ack", 5*time.Second, func() bool { return frames.n() == 2 })

	const typed = `pa"ss</script>` + "\u2028🔑"
	ctx := context.Background()
	for _, in := range []func() error{
		func() error { return tab.Tap(ctx, 10.5, 20) },
		func() error { return tab.Touch(ctx, 1, 2) },
		func() error { return tab.Scroll(ctx, 1, 2, 0, -300) },
		func() error { return tab.InsertText(ctx, typed) },
		func() error { return tab.Key(ctx, "Enter") },
		func() error { return tab.Back(ctx) },
	} {
		if err := in(); err != nil {
			t.Fatal(err)
		}
	}
	want := "tap 10.5,20 0,0; touch 1,2 0,0; scroll 1,2 0,-300; text " + typed + "; key Enter; back 0,0 0,0"
	if got := p.ops(); got != want {
		t.Fatalf("the pump did\n%s\nwant\n%s", got, want)
	}
	p.mu.Lock()
	p.fail = "text"
	p.mu.Unlock()
	if err := tab.InsertText(ctx, typed); err == nil || strings.Contains(err.Error(), "pa") {
		t.Fatalf("a refused text: %v", err)
	}
	tab.Refresh()
	testkit.WaitFor(t, "the refresh", 5*time.Second, func() bool { return strings.HasSuffix(p.ops(), "refresh 0,0 0,0") })

	addr := strings.TrimPrefix(tab.relayed().base(), "http://")
	tab.Close()
	p.mu.Lock()
	byes := p.byes
	p.mu.Unlock()
	if byes != 1 || tab.relayed() != nil {
		t.Fatalf("after Close: %d byes, relay %v", byes, tab.relayed() != nil)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the relay's port %s still takes connections", addr)
	}
	if err := tab.Tap(ctx, 1, 1); err == nil { // no pump: a call, which fakePump refuses
		t.Fatal("a tap after Close went somewhere")
	}
}

// TestRelayNeedsItsKey: without the relay's key (or with another) every
// request gets 404, and nothing reaches the view.
func TestRelayNeedsItsKey(t *testing.T) {
	var frames collector
	r, err := newRelay(frames.on, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer r.stop()
	for _, key := range []string{"", "x" + r.key[1:], r.key[:len(r.key)-1], r.key + "0"} {
		for _, path := range []string{"POST /hello", "POST /frame", "GET /ack?seq=1", "GET /next", "POST /done", "POST /bye", "OPTIONS /frame"} {
			method, p, _ := strings.Cut(path, " ")
			req, _ := http.NewRequest(method, r.base()+p, bytes.NewReader([]byte("jpeg")))
			if key != "" {
				req.Header.Set("X-Relay-Key", key)
			}
			req.Header.Set("X-Frame-Width", "1")
			req.Header.Set("X-Frame-Height", "1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s with key %.8q: %d", path, key, resp.StatusCode)
			}
		}
	}
	if frames.n() != 0 {
		t.Fatalf("%d frames reached the view", frames.n())
	}
}

// TestMCPTargetReplacesAnEndedPump: a pump that ends on its own (its tab
// closed) is replaced by a new one on the chat's current tab; where none
// starts, screenshots take over.
func TestMCPTargetReplacesAnEndedPump(t *testing.T) {
	p := newFakePump(t)
	tab := NewMCPTarget(p.run)
	t.Cleanup(func() { tab.Close() })
	var frames collector
	tab.StartScreencast(context.Background(), screencast, frames.on)
	first := tab.relayed()
	p.mu.Lock()
	p.current.quit()
	p.mu.Unlock()
	testkit.WaitFor(t, "a second pump", 10*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.starts == 2 && tab.relayed() != nil && tab.relayed() != first
	})
	if err := tab.Tap(context.Background(), 3, 4); err != nil || p.ops() != "tap 3,4 0,0" {
		t.Fatalf("a tap on the second pump: %v, %q", err, p.ops())
	}
	tab.Close()
}
