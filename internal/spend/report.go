package spend

import (
	"fmt"
	"strings"
)

// Report is /usage for chat, asked by user: today's and this month's
// tokens of the chat (UTC), the cost when the prices are set, and the
// allowances with what is left of them today.
func (l *Ledger) Report(chat, user int64) string {
	now := l.o.Now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.rollLocked(now); err != nil {
		l.o.Logger.Warn("usage: the month's record is not read", "err", err)
	}
	today := l.chats[chat]
	var month Counts
	for _, m := range l.month {
		month.add(m[chat])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Model usage of this chat (UTC days):\n")
	fmt.Fprintf(&b, "Today (%s): %s\n", l.day, l.countsText(today))
	fmt.Fprintf(&b, "This month (%s): %s\n", now.Format("January 2006"), l.countsText(month))
	if l.o.PerChat > 0 {
		fmt.Fprintf(&b, "Allowance: %s tokens a day for this chat, %s left today", Number(l.o.PerChat), Number(max(l.o.PerChat-today.Tokens(), 0)))
		if l.lifted[chat] {
			b.WriteString(" (lifted by an admin for today)")
		}
		b.WriteString(".\n")
	}
	if l.o.PerUser > 0 && user != 0 {
		u := l.users[user]
		fmt.Fprintf(&b, "You, in every chat today: %s tokens of your %s a day.\n", Number(u.Tokens()), Number(l.o.PerUser))
	}
	if l.o.PerChat <= 0 && l.o.PerUser <= 0 {
		b.WriteString("No daily allowance is set.\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// countsText is "12,345 tokens in 3 model calls (input 10,000, of which
// 4,000 cached; output 2,345), about $0.05", with "; 1,234 estimated, of
// requests that ended early" before the ")" when some were.
func (l *Ledger) countsText(c Counts) string {
	if c.Calls == 0 {
		return "no model calls"
	}
	calls := "calls"
	if c.Calls == 1 {
		calls = "call"
	}
	s := fmt.Sprintf("%s tokens in %s model %s (input %s, of which %s cached; output %s",
		Number(c.Tokens()), Number(c.Calls), calls, Number(c.Input), Number(c.Cached), Number(c.Output))
	if c.Estimated > 0 {
		s += fmt.Sprintf("; %s estimated, of requests that ended early", Number(c.Estimated))
	}
	s += ")"

	if l.priced() {
		s += ", about " + l.costText(c)
	}
	return s
}

// cost prices c in dollars: input (cached tokens at the input price: an
// upper bound, as providers charge less for them) and output.
func (l *Ledger) cost(c Counts) float64 {
	return float64(c.Input)*l.o.PriceInput/1e6 + float64(c.Output)*l.o.PriceOutput/1e6
}

// priced reports whether a price is set (else no cost is shown).
func (l *Ledger) priced() bool { return l.o.PriceInput > 0 || l.o.PriceOutput > 0 }

// costText is c's cost, as /usage says it.
func (l *Ledger) costText(c Counts) string {
	cost := l.cost(c)
	switch {
	case cost == 0:
		return "$0"
	case cost < 0.01:
		return fmt.Sprintf("$%.4f", cost)
	}
	return fmt.Sprintf("$%.2f", cost)
}

// Stats are what a Ledger counted since it was made, for /metrics (whose
// counters start with the process).
type Stats struct {
	Counts // the model calls recorded
	// Cost is their cost in dollars at LLM_PRICE_*_PER_MTOK; Priced is
	// false when no price is set (and Cost is 0: unknown, not free).
	Cost   float64
	Priced bool
	// ReachedChat and ReachedUser are the chats told their daily
	// allowance was used, and the users told theirs (once a day each).
	ReachedChat, ReachedUser int64
}

// Stats reads what the Ledger counted since it was made.
func (l *Ledger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.stats
	st.Cost, st.Priced = l.cost(st.Counts), l.priced()
	return st
}
