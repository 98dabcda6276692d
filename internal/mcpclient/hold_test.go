package mcpclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// heldHarness is a Shared fake under a ceiling of two live sessions and
// three chats; each chat keeps what it remembers in its session only (no
// saved state), so a session stopped under it shows.
func heldHarness(t *testing.T) (h *harness, alice, bob, carol *Session) {
	t.Helper()
	cfg, _ := sharedServer(t, "shared")
	cfg.MaxLive = 2
	cfg.ProcessNoun = "browser"
	h = newHarness(t, nil, cfg)
	return h, h.session(""), h.session(""), h.session("")
}

// callAsync calls tool in s in the background; the result comes on the
// channel.
func callAsync(t *testing.T, s *Session, tool Tool, args string) <-chan Result {
	t.Helper()
	out := make(chan Result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		defer cancel()
		res, err := s.Call(ctx, tool, []byte(args))
		if err != nil {
			res = Result{IsError: true, Content: []chat.Part{{Kind: chat.TextPart, Text: "call error: " + err.Error()}}}
		}
		out <- res
	}()
	return out
}

func waiting(h *harness) int {
	_, _, w := h.client.Usage("shared")
	return w
}

// A running turn keeps the sessions it called: another chat that needs
// one waits in line until the turn ends, instead of taking one from under
// the turn between two of its calls. The chat whose session was then taken
// between its turns is told at its next call.
func TestRunningTurnKeepsItsSession(t *testing.T) {
	h, alice, bob, carol := heldHarness(t)
	remember, recall := h.tool("shared", fakemcp.ToolRemember), h.tool("shared", fakemcp.ToolRecall)

	endAlice := alice.BeginTurn()
	h.call(alice, remember, `{"value":"alice's page"}`)
	endBob := bob.BeginTurn()
	h.call(bob, remember, `{"value":"bob's page"}`)
	defer endBob()

	endCarol := carol.BeginTurn()
	defer endCarol()
	carolsCall := callAsync(t, carol, recall, `{}`)
	testkit.WaitFor(t, "carol to wait in line", 10*time.Second, func() bool { return waiting(h) == 1 })

	// Between two calls of alice's turn (the model thinking): her session
	// is still hers.
	if got := h.call(alice, recall, `{}`).Text(); got != "remembered: alice's page" {
		t.Errorf("alice's second call of her turn: %q, want her session as she left it", got)
	}
	if st, _ := alice.Status("shared"); st.Evictions != 0 {
		t.Errorf("alice's session was stopped %d times during her turn", st.Evictions)
	}
	if n := waiting(h); n != 1 {
		t.Errorf("%d chats waiting while alice and bob are in their turns, want carol", n)
	}

	endAlice() // her turn ends: carol takes her place
	select {
	case res := <-carolsCall:
		if res.IsError || res.Text() != "remembered nothing" {
			t.Errorf("carol's call: %q", res.Text())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("carol still waits after alice's turn ended")
	}
	if st, _ := alice.Status("shared"); st.Evictions != 1 {
		t.Errorf("alice's session stopped %d times for others, want 1 (after her turn)", st.Evictions)
	}

	endCarol() // carol's turn ends: alice may take her place
	defer alice.BeginTurn()()
	res := h.call(alice, recall, `{}`)
	if !strings.HasPrefix(res.Text(), "remembered nothing") ||
		!strings.Contains(res.Text(), "this chat's browser was closed since its last call, to free a place for another chat (at most 2 run at once)") {
		t.Errorf("alice's call after her session was taken between turns: %q, want her told", res.Text())
	}
	if res := h.call(alice, recall, `{}`); strings.Contains(res.Text(), "free a place") {
		t.Errorf("alice is told twice: %q", res.Text())
	}
}

// A turn that has not called its session for the hold's time lets it go
// when another chat waits: holders that sit in long turns (waiting for the
// user) cannot keep the line waiting for ever. The turn is told at its
// next call. The holds' clock is the test's: they lapse when it moves,
// however long the machine takes meanwhile.
func TestTurnHoldLapses(t *testing.T) {
	h, alice, bob, carol := heldHarness(t)
	clock := testkit.NewClock(time.Now())
	h.client.holdIdle, h.client.holdNow = 300*time.Millisecond, clock.Now
	remember, recall := h.tool("shared", fakemcp.ToolRemember), h.tool("shared", fakemcp.ToolRecall)
	defer alice.BeginTurn()()
	h.call(alice, remember, `{"value":"alice's page"}`)
	defer bob.BeginTurn()()
	h.call(bob, remember, `{"value":"bob's page"}`)

	defer carol.BeginTurn()()
	queued := make(chan int, 1)
	carol.OnQueue(func(_ string, ahead int) { queued <- ahead })
	carolsCall := callAsync(t, carol, recall, `{}`)
	select {
	case <-queued: // the holds hold at first
	case res := <-carolsCall:
		t.Fatalf("carol did not wait behind two held sessions: %q", res.Text())
	case <-time.After(30 * time.Second):
		t.Fatal("carol was not told to wait")
	}
	for s, v := range map[*Session]string{alice: "alice", bob: "bob"} {
		if st, _ := s.Status("shared"); st.Evictions != 0 {
			t.Errorf("%s's held session was stopped", v)
		}
	}

	clock.Advance(301 * time.Millisecond) // neither turn has called for the hold's time
	select {
	case res := <-carolsCall:
		if res.IsError || res.Text() != "remembered nothing" {
			t.Errorf("carol's call: %q", res.Text())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("carol waits for ever behind two turns that no longer call")
	}
	lost := 0
	for s, v := range map[*Session]string{alice: "alice's page", bob: "bob's page"} {
		clock.Advance(301 * time.Millisecond) // the other turns' holds lapse: s may take a place
		res := h.call(s, recall, `{}`)
		switch {
		case res.Text() == "remembered: "+v:
		case strings.HasPrefix(res.Text(), "remembered nothing") && strings.Contains(res.Text(), "to free a place for another chat"):
			lost++
		default:
			t.Errorf("%s's next call: %q", v, res.Text())
		}
	}
	if lost == 0 {
		t.Error("neither alice nor bob lost the session carol took")
	}
}
