package spend

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestParsePrices(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]Price
		wantErr string
	}{
		{in: "gpt-4o-mini=0.15/0.075/0.6,gpt-4o=2.5/1.25/10", want: map[string]Price{
			"gpt-4o-mini": {Input: 0.15, Cached: 0.075, Output: 0.6}, "gpt-4o": {Input: 2.5, Cached: 1.25, Output: 10}}},
		{in: " claude-sonnet-4-5 = 3/0.3/15 , ", want: map[string]Price{"claude-sonnet-4-5": {Input: 3, Cached: 0.3, Output: 15}}},
		{in: "local=0/0/0", want: map[string]Price{"local": {}}},
		{in: "m=3/15", want: map[string]Price{"m": {Input: 3, Cached: 3, Output: 15}}},
		{in: "", want: map[string]Price{}},
		{in: "gpt-4o", wantErr: `"gpt-4o" is not model=input/cached/output`},
		{in: "=1/1/1", wantErr: "is not model=input/cached/output"},
		{in: "m=1/2/3/4", wantErr: `"m=1/2/3/4": give input/cached/output (or input/output)`},
		{in: "m=1", wantErr: "give input/cached/output"},
		{in: "m=$1/0.5/2", wantErr: `"$1" is not a price in dollars`},
		{in: "m=1/-0.5/2", wantErr: `"-0.5": a price is 0 or more`},
		{in: "m=1/NaN/2", wantErr: "a price is 0 or more"},
		{in: "m=0x1/1/2", wantErr: "is not a price in dollars"},
		{in: "m=1/2/3", wantErr: "the cached input price (2) is above the input price (1): the order is input/cached/output"},
		{in: "m=1/1/1,m=2/2/2", wantErr: `"m" is priced twice`},
		{in: "a=x/1/1,b=1/y/1", wantErr: `"x" is not a price`},
	}
	for _, tt := range tests {
		got, err := ParsePrices(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePrices(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
		case err != nil || !reflect.DeepEqual(got, tt.want):
			t.Errorf("ParsePrices(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	// Every bad entry is named, not only the first.
	if _, err := ParsePrices("a=x/1/1,b=1/y/1"); err == nil || !strings.Contains(err.Error(), `"y"`) {
		t.Errorf("both entries: %v", err)
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2.5, Cached: 1.25, Output: 10}
	tests := []struct {
		c    Counts
		want float64
	}{
		{Counts{}, 0},
		{Counts{Input: 1_000_000}, 2.5},
		{Counts{Input: 1_000_000, Cached: 1_000_000}, 1.25},
		{Counts{Input: 1_000_000, Cached: 400_000, Output: 100_000}, 0.6*2.5 + 0.4*1.25 + 1},
		{Counts{Input: 10, Cached: 20}, 20 * 1.25 / 1e6}, // more cached than input (a provider's rounding): no negative part
	}
	for _, tt := range tests {
		if got := p.Cost(tt.c); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Cost(%+v) = %v, want %v", tt.c, got, tt.want)
		}
	}
	for usd, want := range map[float64]string{0: "$0", 0.0042: "$0.0042", 0.011: "$0.01", 1.255: "$1.25", 12: "$12.00"} {
		if got := Dollars(usd); got != want {
			t.Errorf("Dollars(%v) = %q, want %q", usd, got, want)
		}
	}
}

var twoModels = map[string]Price{"small": {Input: 1, Cached: 0.1, Output: 4}, "big": {Input: 10, Cached: 1, Output: 40}}

func moneyLedger(t *testing.T, dir string, c *testkit.Clock, perChat, perUser float64) *Ledger {
	t.Helper()
	l := New(Options{Dir: dir, Now: c.Now, DefaultModel: "small", Prices: twoModels, PerChatUSD: perChat, PerUserUSD: perUser})
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// The money allowance: reached at its model's prices (cached tokens at
// the cached price), told once, lifted the next UTC day.
func TestMoneyAllowancePerChat(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC))
	l := moneyLedger(t, t.TempDir(), c, 0.05, 0)
	l.Record(7, 1, "big", call(3000, 2000, 500)) // 1000×10 + 2000×1 + 500×40 = $0.032
	if ok, _ := allow(l, 7, 1); !ok {
		t.Fatal("refused at $0.032 of $0.05")
	}
	l.Record(7, 1, "small", call(10_000, 0, 2_000)) // $0.018: $0.05
	ok, notice := allow(l, 7, 1)
	want := "This chat has used today's allowance of $0.05. I can answer again from 00:00 UTC (in 1 h 0 min)"
	if ok || !strings.HasPrefix(notice, want) {
		t.Errorf("at $0.05: %v, %q; want refused with %q", ok, notice, want)
	}
	if ok, notice := allow(l, 7, 2); ok || notice != "" {
		t.Errorf("again: %v, %q; want refused without a second notice", ok, notice)
	}
	if ok, _ := allow(l, 8, 1); !ok {
		t.Error("another chat is refused")
	}
	c.Set(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	if ok, _ := allow(l, 7, 1); !ok {
		t.Error("refused on the next UTC day")
	}
	if r := l.Report(7, 1, false); !strings.Contains(r, "Allowance: $0.05 a day for this chat, $0.05 left today.") {
		t.Errorf("report of the next day:\n%s", r)
	}
}

func TestMoneyAllowancePerUser(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := moneyLedger(t, t.TempDir(), c, 0, 0.01)
	l.Record(7, 1, "small", call(5000, 0, 0))    // $0.005
	l.Record(-100, 1, "small", call(5000, 0, 0)) // the same user in a group: $0.01
	ok, notice := allow(l, -100, 1)
	if ok || !strings.HasPrefix(notice, "You have used today's allowance of $0.01.") {
		t.Errorf("user 1 at $0.01: %v, %q", ok, notice)
	}
	if ok, _ := allow(l, -100, 2); !ok {
		t.Error("another user of the group is refused")
	}
	if r := l.Report(7, 1, false); !strings.Contains(r, "You, in every chat today: $0.01 of your $0.01 a day.") {
		t.Errorf("report:\n%s", r)
	}
}

// A request holds what it may cost at its model's price: a second one
// waits while the first could take the rest of the allowance.
func TestMoneyReserveHolds(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := moneyLedger(t, t.TempDir(), c, 0.05, 0)
	// 1,000 prompt tokens and 1,000 of answer at big's price: $0.05.
	spent, _, err := l.Reserve(context.Background(), 7, 1, "big", 1000, 1000)
	if err != nil || spent == nil {
		t.Fatalf("refused: %v", err)
	}
	if s, _, err := l.Reserve(cancelled(), 7, 1, "small", 10, 10); err != context.Canceled || s != nil {
		t.Errorf("with $0.05 held: %v; want to wait", err)
	}
	spent(call(1000, 900, 10)) // 100×10 + 900×1 + 10×40 = $0.0023
	if s, _, err := l.Reserve(cancelled(), 7, 1, "small", 10, 10); err != nil || s == nil {
		t.Errorf("after the hold is spent: %v", err)
	}
}

// Lines written before the model was recorded count under the default
// model; /usage says what each model cost, the prompt cache's share, and
// to an admin every chat's.
func TestReportPerModel(t *testing.T) {
	dir := t.TempDir()
	old := `{"chat":7,"user":1,"in":1000000,"out":0}` + "\n" + `{"chat":8,"user":2,"in":1000000,"cached":1000000}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "2026-12-01.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c := testkit.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	l := moneyLedger(t, dir, c, 0, 0)
	l.Record(7, 1, "big", call(100_000, 50_000, 10_000)) // $0.5 + $0.05 + $0.4
	l.Record(7, 1, "gone", call(10, 0, 10))              // a model without a price
	r := l.Report(7, 1, false)
	for _, want := range []string{
		"Today (2026-12-02): 110,020 tokens in 2 model calls (input 100,010, of which 50,000 cached; output 10,010), about $0.95 (not counting gone: no price set)",
		"This month (December 2026): 1,110,020 tokens in 3 model calls",
		"• small: none | 1,000,000 tokens in 1 call, 0 cached, about $1.00",
		"• big: 110,000 tokens in 1 call, 50,000 cached, about $0.95 | 110,000 tokens in 1 call, 50,000 cached, about $0.95",
		"• gone: 20 tokens in 1 call, 0 cached | 20 tokens in 1 call, 0 cached",
		"Prompt cache this month: 50,000 of 1,100,010 input tokens were cache hits (4%)",
		"No daily allowance is set.",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r, "Every chat") {
		t.Errorf("a non-admin sees every chat:\n%s", r)
	}
	r = l.Report(7, 1, true)
	for _, want := range []string{
		"Every chat (you are an admin):",
		"This month (December 2026): 2,110,020 tokens in 4 model calls (input 2,100,010, of which 1,050,000 cached; output 10,010), about $2.05",
		"• small: none | 2,000,000 tokens in 2 calls, 1,000,000 cached, about $1.10",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("admin's report lacks %q:\n%s", want, r)
		}
	}
}
