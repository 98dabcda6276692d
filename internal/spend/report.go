package spend

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// tally is counts with their cost: USD at the prices of the models that
// have one, Unpriced the models of the counts that have none.
type tally struct {
	Counts
	USD      float64
	Unpriced []string
}

func (t *tally) add(model string, c Counts, prices map[string]Price) {
	t.Counts.add(c)
	if p, ok := prices[model]; ok {
		t.USD += p.Cost(c)
	} else if c.Tokens() > 0 && !slices.Contains(t.Unpriced, model) { // transcribed audio has no price
		t.Unpriced = append(t.Unpriced, model)
	}
}

// usage is a window's tallies: in all and per model.
type usage struct {
	all    tally
	models map[string]*tally
}

// sumLocked tallies the month's counts of the days day selects and the
// chats chat selects.
func (l *Ledger) sumLocked(day func(string) bool, chat func(int64) bool) usage {
	u := usage{models: map[string]*tally{}}
	for d, m := range l.month {
		if !day(d) {
			continue
		}
		for k, c := range m {
			if !chat(k.chat) {
				continue
			}
			u.all.add(k.model, c, l.o.Prices)
			t := u.models[k.model]
			if t == nil {
				t = &tally{}
				u.models[k.model] = t
			}
			t.add(k.model, c, l.o.Prices)
		}
	}
	return u
}

// Report is /usage for chat, asked by user: today's and this month's
// tokens of the chat (UTC) and their cost where the prices are set, per
// model, the prompt cache's share, and the allowances with what is left
// of them today; for an admin, the same of every chat.
func (l *Ledger) Report(chat, user int64, admin bool) string {
	now := l.o.Now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.rollLocked(now); err != nil {
		l.o.Logger.Warn("usage: the month's record is not read", "err", err)
	}
	isToday := func(d string) bool { return d == l.day }
	anyDay := func(string) bool { return true }
	this := func(c int64) bool { return c == chat }
	var b strings.Builder
	b.WriteString("Model usage of this chat (UTC days):\n")
	l.windowsText(&b, now, l.sumLocked(isToday, this), l.sumLocked(anyDay, this))
	l.allowancesText(&b, chat, user)
	if admin {
		every := func(int64) bool { return true }
		b.WriteString("\nEvery chat (you are an admin):\n")
		l.windowsText(&b, now, l.sumLocked(isToday, every), l.sumLocked(anyDay, every))
	}
	return strings.TrimRight(b.String(), "\n")
}

// windowsText writes today's and this month's usage, per model when
// there was any, and the prompt cache's share of the month's input.
func (l *Ledger) windowsText(b *strings.Builder, now time.Time, today, month usage) {
	fmt.Fprintf(b, "Today (%s): %s\n", l.day, l.tallyText(today.all))
	fmt.Fprintf(b, "This month (%s): %s\n", now.Format("January 2006"), l.tallyText(month.all))
	if month.all.Calls == 0 && month.all.Audio == 0 {
		return
	}
	models := slices.SortedFunc(maps.Keys(month.models), func(a, b string) int {
		return cmp.Or(cmp.Compare(month.models[b].Tokens(), month.models[a].Tokens()), strings.Compare(a, b))
	})
	b.WriteString("Per model, today | this month:\n")
	for _, m := range models {
		t, mt := today.models[m], month.models[m]
		if t == nil {
			t = &tally{}
		}
		fmt.Fprintf(b, "• %s: %s | %s\n", m, l.shortText(*t), l.shortText(*mt))
	}
	if c := month.all; c.Input > 0 {
		fmt.Fprintf(b, "Prompt cache this month: %s of %s input tokens were cache hits (%d%%), the cheapest tokens.\n",
			Number(c.Cached), Number(c.Input), c.Cached*100/c.Input)
	}
}

// allowancesText writes the allowances of chat and user, and what is
// left of them today.
func (l *Ledger) allowancesText(b *strings.Builder, chat, user int64) {
	o := l.o
	lifted := ""
	if l.lifted[chat] {
		lifted = " (lifted by an admin for today)"
	}
	if o.PerChat > 0 {
		fmt.Fprintf(b, "Allowance: %s tokens a day for this chat, %s left today%s.\n", Number(o.PerChat),
			Number(max(o.PerChat-l.chats[chat].Tokens(), 0)), lifted)
	}
	if o.PerChatUSD > 0 {
		fmt.Fprintf(b, "Allowance: %s a day for this chat, %s left today%s.\n", Dollars(o.PerChatUSD),
			Dollars(max(o.PerChatUSD-l.chatsUSD[chat], 0)), lifted)
	}
	if user != 0 && o.PerUser > 0 {
		fmt.Fprintf(b, "You, in every chat today: %s tokens of your %s a day.\n", Number(l.users[user].Tokens()), Number(o.PerUser))
	}
	if user != 0 && o.PerUserUSD > 0 {
		fmt.Fprintf(b, "You, in every chat today: %s of your %s a day.\n", Dollars(l.usersUSD[user]), Dollars(o.PerUserUSD))
	}
	if !l.limited() {
		b.WriteString("No daily allowance is set.\n")
	}
}

// tallyText is "12,345 tokens in 3 model calls (input 10,000, of which
// 4,000 cached; output 2,345), about $0.05", with "; 1,234 estimated, of
// requests that ended early" before the ")" when some were.
func (l *Ledger) tallyText(t tally) string {
	c := t.Counts
	if c.Calls == 0 {
		return "no model calls" + audioText(c, "; ")
	}
	s := fmt.Sprintf("%s tokens in %s (input %s, of which %s cached; output %s",
		Number(c.Tokens()), plural(c.Calls, "model call"), Number(c.Input), Number(c.Cached), Number(c.Output))
	if c.Estimated > 0 {
		s += fmt.Sprintf("; %s estimated, of requests that ended early", Number(c.Estimated))
	}
	return s + ")" + costText(t) + audioText(c, "; ")
}

// audioText is "<sep>voice notes transcribed: 3 min 20 s" ("" for none).
func audioText(c Counts, sep string) string {
	if c.Audio <= 0 {
		return ""
	}
	d := time.Duration(c.Audio) * time.Second
	if d < time.Minute {
		return fmt.Sprintf("%svoice notes transcribed: %d s", sep, c.Audio)
	}
	return fmt.Sprintf("%svoice notes transcribed: %d min %d s", sep, int(d.Minutes()), c.Audio%60)
}

// shortText is a model's line of /usage: "2,100 tokens in 3 calls, 400
// cached, about $0.0066".
func (l *Ledger) shortText(t tally) string {
	switch {
	case t.Calls == 0 && t.Audio > 0:
		return audioText(t.Counts, "")
	case t.Calls == 0:
		return "none"
	}
	return fmt.Sprintf("%s tokens in %s, %s cached", Number(t.Tokens()), plural(t.Calls, "call"), Number(t.Cached)) + costText(t) + audioText(t.Counts, ", ")
}

// costText is ", about $0.05" — "" when no model of t has a price, and
// "(… has no price)" after it when some have none.
func costText(t tally) string {
	if len(t.Unpriced) > 0 && t.USD == 0 {
		return ""
	}
	s := ", about " + Dollars(t.USD)
	if len(t.Unpriced) > 0 {
		slices.Sort(t.Unpriced)
		s += " (not counting " + strings.Join(t.Unpriced, ", ") + ": no price set)"
	}
	return s
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return Number(n) + " " + unit + "s"
}

// Stats are what a Ledger counted since it was made, for /metrics (whose
// counters start with the process).
type Stats struct {
	Counts // the model calls recorded
	// Models are the calls recorded per model, with their cost.
	Models map[string]ModelStats
	// ReachedChat and ReachedUser are the chats told their daily
	// allowance was used, and the users told theirs (once a day each).
	ReachedChat, ReachedUser int64
}

// ModelStats are one model's calls since the Ledger was made.
type ModelStats struct {
	Counts
	// Cost is their cost in dollars at the model's price; Priced is
	// false when it has none (and Cost is 0: unknown, not free).
	Cost   float64
	Priced bool
}

// Stats reads what the Ledger counted since it was made.
func (l *Ledger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.stats
	st.Models = make(map[string]ModelStats, len(l.models))
	for m, c := range l.models {
		p, ok := l.o.Prices[m]
		st.Models[m] = ModelStats{Counts: c, Cost: p.Cost(c), Priced: ok}
	}
	return st
}
