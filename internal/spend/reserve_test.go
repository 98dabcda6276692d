package spend

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// cancelled is a context that has ended: Reserve with it answers at once,
// with its error when the request would have to wait.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// Requests made at once hold what they may cost: a request goes while
// what is spent and held is under the allowance, then the next waits for
// one in flight to end, and once the allowance is used it is refused.
// What is spent ends over the allowance by less than one request.
func TestReserveHoldsTokensForRequestsInFlight(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 5000, 0)
	var spends []func(llm.Usage)
	for i := range 3 { // 0, 2,100 and 4,200 held: each under 5,000
		spent, _, err := l.Reserve(context.Background(), 7, 1, "", 2100, 0)
		if err != nil || spent == nil {
			t.Fatalf("request %d refused with %d held: %v", i+1, 2100*i, err)
		}
		spends = append(spends, spent)
	}
	waits := func(when string) {
		t.Helper()
		if spent, notice, err := l.Reserve(cancelled(), 7, 1, "", 2100, 0); err != context.Canceled || spent != nil || notice != "" {
			t.Errorf("%s: %v, %q; want to wait", when, err, notice)
		}
	}
	waits("6,300 held")
	spends[0](call(40, 0, 2000))
	waits("2,040 spent, 4,200 held")
	spends[0](call(40, 0, 2000)) // a second call changes nothing
	spends[1](call(40, 0, 2000))
	waits("4,080 spent, 2,100 held")
	spends[2](call(40, 0, 2000))
	spent, notice, err := l.Reserve(cancelled(), 7, 1, "", 2100, 0)
	if err != nil || spent != nil || !strings.HasPrefix(notice, "This chat has used today's allowance of 5,000 tokens.") {
		t.Errorf("6,120 spent: %v, %q; want refused with the notice", err, notice)
	}
	if got := l.Stats().Counts; got.Tokens() != 6120 || got.Calls != 3 {
		t.Errorf("spent %+v", got)
	}
}

// Fifty requests at once, each spending what it holds as soon as it
// goes: however they interleave, the chat spends at most the allowance
// and one request.
func TestReserveUnderAFlood(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 5000, 0)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			spent, _, err := l.Reserve(context.Background(), 7, 1, "", 2100, 0)
			if err != nil {
				t.Error(err)
			}
			if spent != nil {
				spent(call(40, 0, 2000))
			}
		})
	}
	wg.Wait()
	if got := l.Stats().Counts.Tokens(); got > 5000+2040 || got < 5000 {
		t.Errorf("%d tokens spent against 5,000, each request 2,040", got)
	}
}

// A waiting request goes once tokens are freed — by a request that cost
// less than it held, or by an admin's lift — and a user's allowance
// holds across their chats.
func TestReserveWaitsForTokensFreed(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 5000, 3000)
	first, _, _ := l.Reserve(context.Background(), 7, 1, "", 3000, 0)
	if spent, _, err := l.Reserve(cancelled(), -100, 1, "", 10, 0); spent != nil || err == nil {
		t.Fatal("user 1 went in another chat with their 3,000 held in the first: want a wait")
	}
	went := make(chan func(llm.Usage))
	go func() {
		spent, _, _ := l.Reserve(context.Background(), -100, 1, "", 2500, 0)
		went <- spent
	}()
	first(call(100, 0, 20)) // 120 spent: 2,880 left for the user
	select {
	case spent := <-went:
		if spent == nil {
			t.Fatal("refused")
		}
		spent(llm.Usage{}) // it never reached the model: no call
	case <-time.After(20 * time.Second):
		t.Fatal("still waiting after the first request freed its tokens")
	}
	if got := l.Stats().Counts; got.Calls != 1 || got.Tokens() != 120 {
		t.Errorf("spent %+v: a request that cost nothing is no call", got)
	}

	// A request that holds the whole allowance; the next waits until the
	// admin lifts it.
	whole, _, _ := l.Reserve(context.Background(), 8, 2, "", 5000, 0)
	defer whole(llm.Usage{})
	go func() {
		spent, _, _ := l.Reserve(context.Background(), 8, 2, "", 10, 0)
		went <- spent
	}()
	l.AllowMore(8, 42)
	select {
	case spent := <-went:
		if spent == nil {
			t.Fatal("refused after the lift")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still waiting after the lift")
	}
}

// A request that ended early is counted with its estimate, and /usage
// says how much was estimated.
func TestEstimatedUsageIsShown(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 0, 0)
	spent, _, _ := l.Reserve(context.Background(), 7, 1, "", 100, 0)
	spent(llm.Usage{InputTokens: 1200, OutputTokens: 88, Estimated: 88})
	l.Record(7, 1, "", call(100, 0, 10))
	report := l.Report(7, 1, false)
	want := "Today (2026-12-01): 1,398 tokens in 2 model calls (input 1,300, of which 0 cached; output 98; 88 estimated, of requests that ended early)"
	if !strings.Contains(report, want) {
		t.Errorf("report lacks %q:\n%s", want, report)
	}
	if st := l.Stats(); st.Estimated != 88 {
		t.Errorf("stats %+v", st)
	}
}
