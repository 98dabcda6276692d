package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// memCeiling is a Client over the in-memory server with a ceiling of
// limit live processes, for chats whose calls block on release (a channel
// per call) so a test decides when each is idle.
type memCeiling struct {
	h    *harness
	mem  *memServer
	tool Tool
}

func newMemCeiling(t *testing.T, limit int) *memCeiling {
	cfg := mcpconfig.ServerConfig{Name: "mem", Command: "/bin/true", Enabled: true, StartupTimeout: 10 * time.Second,
		CallTimeout: time.Hour, MaxLive: limit}
	mem := &memServer{}
	h := newHarness(t, nil, cfg)
	h.client.sp.dial = mem.dial
	return &memCeiling{h: h, mem: mem, tool: Tool{Server: "mem", MCPName: "echo", Name: "echo"}}
}

func (m *memCeiling) live() int {
	m.mem.mu.Lock()
	defer m.mem.mu.Unlock()
	return m.mem.starts - m.mem.terminated
}

// Under the ceiling, a chat that needs a process stops the least recently
// used idle one of another chat and starts its own; the live processes
// never exceed the ceiling.
func TestCeilingStopsTheLeastRecentlyUsedIdleProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemCeiling(t, 2)
		a, b, c := m.h.session(""), m.h.session(""), m.h.session("")
		m.h.call(a, m.tool, `{"text":"a"}`)
		time.Sleep(time.Second)
		m.h.call(b, m.tool, `{"text":"b"}`)
		time.Sleep(time.Second)
		m.h.call(a, m.tool, `{"text":"a again"}`) // b is now the least recently used
		time.Sleep(time.Second)
		m.h.call(c, m.tool, `{"text":"c"}`)
		if n := m.live(); n != 2 {
			t.Errorf("%d live processes, want the ceiling of 2", n)
		}
		if st, _ := b.Status("mem"); st.State != StateNotStarted || st.Evictions != 1 {
			t.Errorf("b: %v, %d evictions; want stopped for c", st.State, st.Evictions)
		}
		if st, _ := a.Status("mem"); st.State != StateRunning {
			t.Errorf("a: %v, want running (used more recently than b)", st.State)
		}
		if live, limit, waiting := m.h.client.Usage("mem"); live != 2 || limit != 2 || waiting != 0 {
			t.Errorf("usage %d of %d, %d waiting", live, limit, waiting)
		}
		m.h.client.Discover(context.Background()) // /mcp does not wait for it
		if st := statusOf(t, c, "mem"); st.State != chat.ServerRunning || st.Live != 2 || st.Limit != 2 {
			t.Errorf("/mcp: %+v", st)
		}
	})
}

// When every live process is busy, the newcomer waits in a FIFO queue,
// told once how many chats are ahead; it gets the first slot that frees or
// the first process that goes idle. /stop leaves the queue. No call fails
// because of the ceiling.
func TestCeilingQueueWhenEveryProcessIsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemCeiling(t, 1)
		busy := make(chan struct{})
		m.mem.block = busy // calls wait until busy closes
		a, b, c, d := m.h.session(""), m.h.session(""), m.h.session(""), m.h.session("")
		var mu sync.Mutex
		var told []string
		for name, s := range map[string]*Session{"b": b, "c": c, "d": d} {
			s.OnQueue(func(server string, ahead int) {
				mu.Lock()
				told = append(told, fmt.Sprintf("%s:%s:%d", name, server, ahead))
				mu.Unlock()
			})
		}
		results := make(chan string, 4)
		call := func(name string, s *Session, ctx context.Context) {
			res, err := s.Call(ctx, m.tool, json.RawMessage(`{"text":"`+name+`"}`))
			if err != nil {
				results <- name + ":" + err.Error()
				return
			}
			results <- res.Text()
		}
		go call("a", a, context.Background())
		synctest.Wait()
		go call("b", b, context.Background())
		synctest.Wait()
		ctx, stop := context.WithCancel(context.Background())
		go call("c", c, ctx)
		synctest.Wait()
		go call("d", d, context.Background())
		synctest.Wait()
		if live, _, waiting := m.h.client.Usage("mem"); live != 1 || waiting != 3 {
			t.Fatalf("%d live, %d waiting; want 1 and 3", live, waiting)
		}
		if st, _ := c.Status("mem"); st.State != StateWaiting {
			t.Errorf("c: %v, want waiting", st.State)
		}
		stop() // /stop in c: it leaves the queue
		if got := <-results; got != "c:context canceled" {
			t.Errorf("c: %q", got)
		}
		close(busy) // a's call ends: a is idle, b (first in the queue) takes its place
		synctest.Wait()
		got := map[string]bool{<-results: true, <-results: true, <-results: true}
		if !got["a"] || !got["b"] || !got["d"] {
			t.Errorf("results %v, want a, b and d answered", got)
		}
		if n := m.live(); n > 1 {
			t.Errorf("%d live processes over the ceiling of 1", n)
		}
		mu.Lock()
		defer mu.Unlock()
		want := map[string]bool{"b:mem:0": true, "c:mem:1": true, "d:mem:2": true}
		if len(told) != 3 || !want[told[0]] || !want[told[1]] || !want[told[2]] {
			t.Errorf("queue notices %v, want b 0 ahead, c 1, d 2, once each", told)
		}
	})
}

// Prewarm starts a chat's process ahead of its first call, which then
// finds it running; it takes only a free slot: it neither stops another
// chat's idle process nor waits behind a busy one.
func TestPrewarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemCeiling(t, 1)
		a, b := m.h.session(""), m.h.session("")
		a.Prewarm("mem")
		synctest.Wait()
		if st, _ := a.Status("mem"); st.State != StateRunning || m.live() != 1 {
			t.Fatalf("after the prewarm: %v, %d live; want running", st.State, m.live())
		}
		m.h.call(a, m.tool, `{"text":"a"}`)
		if st, _ := a.Status("mem"); st.Starts != 1 {
			t.Errorf("%d starts, want the prewarmed one only", st.Starts)
		}

		b.Prewarm("mem") // the one slot is a's, idle: not taken by a prewarm
		synctest.Wait()
		if st, _ := b.Status("mem"); st.State != StateNotStarted {
			t.Errorf("b: %v, want not started", st.State)
		}
		if st, _ := a.Status("mem"); st.State != StateRunning || st.Evictions != 0 {
			t.Errorf("a: %v, %d evictions; want left running", st.State, st.Evictions)
		}
		m.h.call(b, m.tool, `{"text":"b"}`) // a call does take it
		if st, _ := a.Status("mem"); st.Evictions != 1 {
			t.Errorf("a: %d evictions, want stopped for b's call", st.Evictions)
		}
		b.Prewarm("mem") // running already: nothing to do
		synctest.Wait()
		if st, _ := b.Status("mem"); st.Starts != 1 {
			t.Errorf("b: %d starts", st.Starts)
		}
	})
}

// A server with State saves the chat's state when its calls pause — at
// once the first time, then at most every stateSaveEvery, the save
// waiting for the rest of the interval — and before a graceful stop.
func TestStateSavedWhenCallsPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemCeiling(t, 4)
		a := m.h.session("")
		a.conns["mem"].cfg.State = &mcpconfig.StateTools{Save: "save", Restore: "restore", File: "state.json"}
		saves := func() int {
			n := 0
			for _, c := range m.mem.calls() {
				if c == "save" {
					n++
				}
			}
			return n
		}
		m.h.call(a, m.tool, `{"text":"one"}`)
		synctest.Wait()
		if n := saves(); n != 1 {
			t.Fatalf("%d saves after the first call, want 1", n)
		}
		time.Sleep(10 * time.Second)
		m.h.call(a, m.tool, `{"text":"two"}`)
		synctest.Wait()
		if n := saves(); n != 1 {
			t.Errorf("%d saves 10 s later, want still 1 (at most one a minute)", n)
		}
		time.Sleep(stateSaveEvery)
		synctest.Wait()
		if n := saves(); n != 2 {
			t.Errorf("%d saves once the minute is over, want 2 (the second call's change)", n)
		}
		time.Sleep(2 * stateSaveEvery) // nothing changed: no save
		synctest.Wait()
		if n := saves(); n != 2 {
			t.Errorf("%d saves with nothing new, want 2", n)
		}
		if err := a.Restart("mem"); err != nil {
			t.Fatal(err)
		}
		if n := saves(); n != 3 {
			t.Errorf("%d saves after a graceful stop, want 3", n)
		}
	})
}

// Shutting down with chats in the queue ends their waits and returns once
// every process is gone.
func TestCeilingCloseWithQueuedChats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMemCeiling(t, 1)
		busy := make(chan struct{})
		m.mem.block = busy
		a, b := m.h.session(""), m.h.session("")
		results := make(chan error, 2)
		for _, s := range []*Session{a, b} {
			go func() {
				res, err := s.Call(context.Background(), m.tool, json.RawMessage(`{"text":"x"}`))
				if err == nil && res.IsError { // a's, cut short: an error result
					err = errors.New(res.Text())
				}
				results <- err
			}()
			synctest.Wait()
		}
		if _, _, waiting := m.h.client.Usage("mem"); waiting != 1 {
			t.Fatalf("%d waiting, want b", waiting)
		}
		closed := make(chan struct{})
		go func() { m.h.client.Close(); close(closed) }()
		synctest.Wait()
		<-closed
		for range 2 {
			if err := <-results; err == nil {
				t.Error("a call answered normally across the shutdown, want it ended")
			}
		}
		if n := m.live(); n != 0 {
			t.Errorf("%d live processes after Close", n)
		}
	})
}
