package liveview

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// A relay carries an MCPTarget's frames and inputs between the bot and its
// pump: code that one browser_run_code_unsafe call leaves running in the
// chat's @playwright/mcp process (Node, not the page). The pump opens a
// CDP session on the chat's tab through Playwright (no DevTools port),
// streams its screencast and does the inputs; it reaches the bot over
// HTTP on 127.0.0.1, a port of the relay's own, every request with the
// relay's 256-bit key. So no frame and no tap waits for a tool call, each
// of which @playwright/mcp holds half a second (its settle time) before it
// answers. What the user types travels over this loopback connection, and
// no longer in a tool call's code.
//
// The relay's requests (all need the key, else 404):
//
//	POST /hello      the pump is up (its start call waits for the answer)
//	POST /frame      a JPEG; X-Frame-Width/Height (CSS px), X-Frame-Url;
//	                 answers the frame's sequence number
//	GET  /ack?seq=n  204 once the view took frame n (or skipped it); 202
//	                 after relayPoll, to ask again; 410 once stopping
//	GET  /next       the next input as JSON; 204 after relayPoll; 410 once
//	                 stopping
//	POST /done       {"id": n, "ok": bool}: how input n went
//	POST /bye        the pump stopped its screencast and let its CDP
//	                 session go
type relay struct {
	key     string
	ln      net.Listener
	srv     *http.Server
	serveWG sync.WaitGroup
	onFrame func(Frame)
	setURL  func(string)

	cmds   chan relayCmd // taken by /next
	wake   chan struct{} // a refresh is wanted (1 buffered)
	stopCh chan struct{} // closed by stop
	endCh  chan struct{} // closed when the pump ended: /bye, or lost
	once   sync.Once
	end    sync.Once

	mu      sync.Mutex
	seq     int           // the last frame's
	acked   int           // the highest frame the view acked
	ackCh   chan struct{} // closed (and replaced) on each ack
	nextID  int
	waiting map[int]chan bool // inputs sent, by id, waiting for /done
	up      bool              // the pump said hello
	refresh bool              // a refresh is wanted: /next gives it first
}

// relayCmd is one input (or op "refresh": the screencast restarted, so it
// sends the tab as it is now). Text carries what the user typed.
type relayCmd struct {
	ID   int     `json:"id"`
	Op   string  `json:"op"`
	X    float64 `json:"x,omitempty"`
	Y    float64 `json:"y,omitempty"`
	DX   float64 `json:"dx,omitempty"`
	DY   float64 `json:"dy,omitempty"`
	Text string  `json:"text,omitempty"`
	Key  string  `json:"key,omitempty"`
}

// How long a relay long poll waits before it answers "ask again" (well
// under Node fetch's 300 s header timeout), how long a stop waits for the
// pump's goodbye, and the bounds on what the pump may send.
const (
	relayPoll      = 20 * time.Second
	relayByeWait   = 2 * time.Second
	relayStartWait = 10 * time.Second
	relayTakeWait  = 15 * time.Second
	maxRelayFrame  = 8 << 20
	maxRelayDone   = 1 << 10
	relayMaxConns  = 64
)

// errRelayStopped is an input sent to a relay that stopped (or stops
// before the pump did it).
var errRelayStopped = errors.New("the tab's relay stopped")

// newRelay listens on a free port of 127.0.0.1 and serves the pump; it
// does not start the pump (startPump does).
func newRelay(onFrame func(Frame), setURL func(string)) (*relay, error) {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the tab's relay: %w", err)
	}
	r := &relay{key: hex.EncodeToString(k[:]), ln: ln, onFrame: onFrame, setURL: setURL,
		cmds: make(chan relayCmd), wake: make(chan struct{}, 1), stopCh: make(chan struct{}), endCh: make(chan struct{}),
		ackCh: make(chan struct{}), waiting: map[int]chan bool{}}
	// The pump holds at most four connections; the rest is for whoever
	// else finds the port, and gets 404 (long polls answer within
	// relayPoll, so WriteTimeout never cuts one short).
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout: relayPoll + 10*time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}
	r.serveWG.Add(1)
	go func() {
		defer r.serveWG.Done()
		r.srv.Serve(netutil.LimitListener(ln, relayMaxConns)) // ends with Close
	}()
	return r, nil
}

// base is the relay's address, as the pump reaches it.
func (r *relay) base() string { return "http://" + r.ln.Addr().String() }

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if subtle.ConstantTimeCompare([]byte(req.Header.Get("X-Relay-Key")), []byte(r.key)) != 1 {
		http.NotFound(w, req)
		return
	}
	switch req.Method + " " + req.URL.Path {
	case "POST /hello":
		r.mu.Lock()
		r.up = true
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "POST /frame":
		r.serveFrame(w, req)
	case "GET /ack":
		seq, _ := strconv.Atoi(req.URL.Query().Get("seq"))
		w.WriteHeader(r.waitAck(req.Context(), seq))
	case "GET /next":
		r.serveNext(w, req)
	case "POST /done":
		r.serveDone(w, req)
	case "POST /bye":
		r.ended()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, req)
	}
}

// ended marks the pump as ended: it said bye, or it stopped taking inputs.
func (r *relay) ended() { r.end.Do(func() { close(r.endCh) }) }

func (r *relay) stopped() bool {
	select {
	case <-r.stopCh:
		return true
	default:
		return false
	}
}

func (r *relay) serveFrame(w http.ResponseWriter, req *http.Request) {
	if r.stopped() {
		w.WriteHeader(http.StatusGone)
		return
	}
	jpeg, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxRelayFrame))
	width, _ := strconv.Atoi(req.Header.Get("X-Frame-Width"))
	height, _ := strconv.Atoi(req.Header.Get("X-Frame-Height"))
	if err != nil || len(jpeg) == 0 || width <= 0 || height <= 0 || width > 1<<14 || height > 1<<14 {
		http.Error(w, "bad frame", http.StatusBadRequest)
		return
	}
	if u, err := url.PathUnescape(req.Header.Get("X-Frame-Url")); err == nil {
		r.setURL(u)
	}
	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	r.onFrame(Frame{JPEG: jpeg, Size: image.Pt(width, height), Ack: seq})
	w.Write([]byte(strconv.Itoa(seq)))
}

// waitAck is the status /ack answers: 204 once frame seq was acked.
func (r *relay) waitAck(ctx context.Context, seq int) int {
	t := time.NewTimer(relayPoll)
	defer t.Stop()
	for {
		r.mu.Lock()
		acked, ch := r.acked >= seq, r.ackCh
		r.mu.Unlock()
		if acked {
			return http.StatusNoContent
		}
		select {
		case <-ch:
		case <-r.stopCh:
			return http.StatusGone
		case <-t.C:
			return http.StatusAccepted
		case <-ctx.Done():
			return http.StatusAccepted
		}
	}
}

// ack is the view's AckFrame: the pump may send the next frame.
func (r *relay) ack(seq int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq > r.acked {
		r.acked = seq
		close(r.ackCh)
		r.ackCh = make(chan struct{})
	}
}

func (r *relay) serveNext(w http.ResponseWriter, req *http.Request) {
	t := time.NewTimer(relayPoll)
	defer t.Stop()
	for {
		r.mu.Lock()
		refresh := r.refresh
		r.refresh = false
		r.mu.Unlock()
		if refresh && !r.stopped() {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(relayCmd{Op: "refresh"})
			return
		}
		select {
		case c := <-r.cmds:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(c)
		case <-r.wake:
			continue
		case <-r.stopCh:
			w.WriteHeader(http.StatusGone)
		case <-t.C:
			w.WriteHeader(http.StatusNoContent)
		case <-req.Context().Done():
		}
		return
	}
}

func (r *relay) serveDone(w http.ResponseWriter, req *http.Request) {
	var d struct {
		ID int  `json:"id"`
		OK bool `json:"ok"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxRelayDone)).Decode(&d); err != nil {
		http.Error(w, "bad input result", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	ch := r.waiting[d.ID]
	delete(r.waiting, d.ID)
	r.mu.Unlock()
	if ch != nil {
		ch <- d.OK // buffered
	}
	w.WriteHeader(http.StatusNoContent)
}

// do has the pump do c, and waits for it (inputs run one at a time, in
// order). Its error never carries c's text.
func (r *relay) do(ctx context.Context, c relayCmd) error {
	done := make(chan bool, 1)
	r.mu.Lock()
	r.nextID++
	c.ID = r.nextID
	r.waiting[c.ID] = done
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, c.ID)
		r.mu.Unlock()
	}()
	take := time.NewTimer(relayTakeWait)
	defer take.Stop()
	select {
	case r.cmds <- c:
	case <-take.C: // the pump polls all the time but while it does an input (a Back takes up to 10 s)
		r.ended()
		return errRelayStopped
	case <-r.endCh:
		return errRelayStopped
	case <-r.stopCh:
		return errRelayStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case ok := <-done:
		if !ok {
			return errors.New("the browser did not take it")
		}
		return nil
	case <-r.endCh:
		return errRelayStopped
	case <-r.stopCh:
		return errRelayStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// askRefresh asks the pump, without waiting, to restart the screencast
// (it then sends the tab as it is now) at its next /next; one already
// asked for is enough.
func (r *relay) askRefresh() {
	r.mu.Lock()
	r.refresh = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// stop tells the pump to stop, waits (at most relayByeWait) for it to have
// stopped the screencast and let its CDP session go, then closes the
// listener and waits for the server.
func (r *relay) stop() {
	r.once.Do(func() {
		close(r.stopCh)
		r.mu.Lock()
		up := r.up
		r.mu.Unlock()
		if up {
			t := time.NewTimer(relayByeWait)
			select {
			case <-r.endCh:
			case <-t.C:
			}
			t.Stop()
		}
		r.srv.Close()
		r.serveWG.Wait()
	})
}
