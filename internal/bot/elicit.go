package bot

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Labels and choices of a server's questions (elicitation).
const (
	declineLabel = "❌ Decline"
	cancelLabel  = "Cancel"
	skipLabel    = "Skip"
	doneLabel    = "✅ Done"
	yesLabel     = "Yes"
	noLabel      = "No"
	okLabel      = "✅ OK"

	choiceDecline = "decline"
	choiceCancel  = "cancel"
	choiceSkip    = "skip"
	choiceDefault = "default"
	choiceDone    = "done"
	choiceYes     = "yes"
	choiceNo      = "no"
	choiceValue   = "v:" // + the option's index
	choiceToggle  = "t:" // + the option's index (a multiple choice)
)

// elicitRefusal is the alert for a group member who did not start the
// turn (and is no admin).
const elicitRefusal = "Only the person whose message started this, or an admin, can answer."

// Limits of a form's messages: room left for the field's own lines, the
// longest button label, the most options shown as buttons.
const (
	maxServerMessage = 2000
	maxDescription   = 1000
	maxButtonLabel   = 40
	maxOptionButtons = maxButtons - 8
)

// Elicit puts a server's question to the chat (session.Elicitor).
//
// A form: first a message naming the server with its question, then one
// message per field — its title, description, whether it is required, its
// default and what to answer —, with Decline and Cancel buttons (and Skip,
// or "Use the default", when the field may be left out). A boolean or an
// enum is answered with buttons (a multiple choice ticks its options, then
// Done); anything may be typed as a message, which is checked against the
// field: a bad answer is asked again with the reason. Typed answers are
// taken from the chat while the form is open (Bot.handleMessage) and go to
// the server only. A URL: the link, its host, and Done, Decline and
// Cancel. In a private chat its user answers; in a group the user whose
// message started the turn, or an admin; the others' messages go on to
// the session as usual. A URL question also ends, as Done, when the server
// reports the interaction at the page finished (req.Completed). ctx's end
// (the call's timeout, /stop, the turn's end) cancels; the buttons then
// answer "expired". One form is open in a chat at a time: another waits
// its turn.
func (c *Chat) Elicit(ctx context.Context, place chat.Place, req session.ElicitRequest) (chat.ElicitResult, error) {
	cancelled := chat.ElicitResult{Action: chat.ElicitCancel}
	release, err := c.forms.acquire(ctx, place)
	if err != nil {
		return cancelled, err
	}
	defer release()
	var may func(int64) bool
	if place.Chat < 0 { // a group: not everyone in it may answer
		may = func(user int64) bool { return user == req.UserID || (c.isAdmin != nil && c.isAdmin(user)) }
	}
	if req.Mode == chat.ElicitURL {
		return c.elicitURL(ctx, place, req, may)
	}
	return c.elicitForm(ctx, place, req, may)
}

// endLine is the line a question ends with when err ended it: ctx's end,
// by its cause (see session.Elicitor), or a failure to ask.
func endLine(ctx context.Context, err error) string {
	switch {
	case ctx.Err() == nil:
		return "⚠️ Could not ask: cancelled."
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return "⌛ No answer in time: cancelled."
	}
	return "⏹ Stopped: cancelled."
}

// elicitHead is the first lines of a server's question (Telegram HTML).
func elicitHead(icon, verb string, req session.ElicitRequest) string {
	msg := strings.TrimSpace(req.Message)
	if tgformat.UTF16Len(msg) > maxServerMessage {
		msg = tgformat.CutPlain(msg, maxServerMessage)[0] + "…"
	}
	head := fmt.Sprintf("%s <b>%s</b> %s", icon, html.EscapeString(req.Server), verb)
	if msg != "" {
		head += "\n" + html.EscapeString(msg)
	}
	return head
}

func (c *Chat) elicitURL(ctx context.Context, place chat.Place, req session.ElicitRequest, may func(int64) bool) (chat.ElicitResult, error) {
	host := req.URL
	if u, err := url.Parse(req.URL); err == nil {
		host = u.Host
	}
	text := elicitHead("🔗", "asks you to open a page:", req) +
		fmt.Sprintf("\n\nThe page is on <b>%s</b>:\n<a href=\"%s\">%s</a>\n\nOpen it, then press Done; or Decline.",
			html.EscapeString(host), html.EscapeString(req.URL), html.EscapeString(req.URL))
	q := Question{Text: text, HTML: true, MayAnswer: may, Refusal: elicitRefusal, Private: true,
		Buttons: [][]Button{{{Label: doneLabel, Choice: choiceDone}, {Label: declineLabel, Choice: choiceDecline}, {Label: cancelLabel, Choice: choiceCancel}}},
		// The server's word that the interaction at the page is over
		// (notifications/elicitation/complete) is as good as Done; nil
		// when the server gave no id.
		Ends: req.Completed,
		Outcome: func(a Answer, err error) string {
			switch {
			case err != nil:
				return endLine(ctx, err)
			case a.Choice == ChoiceEnded:
				return "✅ " + req.Server + " reports it finished."
			case a.Choice == choiceDone:
				return "✅ " + a.Name + " went to the page."
			case a.Choice == choiceDecline:
				return "❌ Declined by " + a.Name + "."
			}
			return "Cancelled by " + a.Name + "."
		}}
	a, err := c.Ask(ctx, place, q)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return chat.ElicitResult{Action: chat.ElicitCancel}, err
	case a.Choice == ChoiceEnded, a.Choice == choiceDone:
		return chat.ElicitResult{Action: chat.ElicitAccept}, nil
	case a.Choice == choiceDecline:
		return chat.ElicitResult{Action: chat.ElicitDecline}, nil
	}
	return chat.ElicitResult{Action: chat.ElicitCancel}, nil
}

func (c *Chat) elicitForm(ctx context.Context, place chat.Place, req session.ElicitRequest, may func(int64) bool) (chat.ElicitResult, error) {
	typed := c.forms.listen(place, may)
	defer c.forms.unlisten(place, typed)
	fields := req.Form.Fields
	privacy := "\n\n<i>Your answers go to " + html.EscapeString(req.Server) + " only, not to the AI.</i>"
	if len(fields) == 0 { // nothing to fill in: a yes or no
		q := Question{Text: elicitHead("❓", "asks:", req) + privacy, HTML: true, MayAnswer: may, Refusal: elicitRefusal, Private: true,
			Buttons: [][]Button{{{Label: okLabel, Choice: choiceDone}, {Label: declineLabel, Choice: choiceDecline}, {Label: cancelLabel, Choice: choiceCancel}}},
			Outcome: func(a Answer, err error) string {
				if err != nil {
					return endLine(ctx, err)
				}
				return closingLine(a.Choice, a.Name, req.Server)
			}}
		a, err := c.Ask(ctx, place, q)
		switch {
		case err != nil:
			return chat.ElicitResult{Action: chat.ElicitCancel}, err
		case a.Choice == choiceDone:
			return chat.ElicitResult{Action: chat.ElicitAccept, Content: map[string]any{}}, nil
		case a.Choice == choiceDecline:
			return chat.ElicitResult{Action: chat.ElicitDecline}, nil
		}
		return chat.ElicitResult{Action: chat.ElicitCancel}, nil
	}

	intro := elicitHead("❓", "asks:", req) + "\n" + questionsLine(len(fields), place.Chat < 0) + privacy
	m, err := c.sendMessage(ctx, place, intro, models.ParseModeHTML)
	if err != nil {
		c.log.Error("question not delivered", "chat", place, "err", err.Error())
		return chat.ElicitResult{Action: chat.ElicitCancel}, err
	}
	head := &posed{place: place, msgID: m.ID, text: intro, mode: models.ParseModeHTML}
	content := map[string]any{}
	for i, f := range fields {
		step := fieldStep{req: req, place: place, n: i + 1, of: len(fields), field: f, group: place.Chat < 0, may: may}
		out, err := c.askField(ctx, step, typed)
		switch {
		case err != nil:
			c.closeWith(ctx, head, endLine(ctx, err))
			return chat.ElicitResult{Action: chat.ElicitCancel}, err
		case out.action != "":
			c.closeWith(ctx, head, closingLine(out.action, out.by, req.Server))
			if out.action == choiceDecline {
				return chat.ElicitResult{Action: chat.ElicitDecline}, nil
			}
			return chat.ElicitResult{Action: chat.ElicitCancel}, nil
		case out.set:
			content[f.Name] = out.value
		}
	}
	c.closeWith(ctx, head, "✅ Answered: sent to "+req.Server+".")
	return chat.ElicitResult{Action: chat.ElicitAccept, Content: content}, nil
}

func questionsLine(n int, group bool) string {
	s := "One question follows."
	if n > 1 {
		s = strconv.Itoa(n) + " questions follow, one at a time."
	}
	if group {
		s += " Answer with the buttons, or reply to a question with your answer."
	}
	return s
}

// closingLine is what a form's first message ends with once a button
// ended it: done (accepted), declined or cancelled.
func closingLine(choice, name, server string) string {
	switch choice {
	case choiceDone:
		return "✅ Answered by " + name + ": sent to " + server + "."
	case choiceDecline:
		return "❌ Declined by " + name + "."
	}
	return "Cancelled by " + name + "."
}

// fieldStep is one field of a form being asked.
type fieldStep struct {
	req   session.ElicitRequest
	place chat.Place
	n, of int // the field's place: n of of
	field chat.ElicitField
	group bool
	may   func(int64) bool
}

// fieldOutcome is how a field was answered: a value (set), left out
// (neither), or the whole form declined or cancelled (action, by whom).
type fieldOutcome struct {
	value  any
	set    bool
	action string // choiceDecline, choiceCancel, or ""
	by     string
}

// askField asks one field until it is answered, left out, or the form
// ends; a bad answer closes the question with the reason and asks it
// again. The error is ctx's when it ended the form.
func (c *Chat) askField(ctx context.Context, step fieldStep, typed *listener) (fieldOutcome, error) {
	f := step.field
	var picked []string // a multiple choice's ticks
	retry := ""
	for {
		q := Question{Text: step.text(retry), HTML: true, Buttons: step.buttons(picked), MayAnswer: step.may, Refusal: elicitRefusal, Private: true}
		if err := q.check(); err != nil {
			return fieldOutcome{}, err
		}
		ps, err := c.pose(ctx, step.chat(), q, true)
		if err != nil {
			return fieldOutcome{}, err
		}
		out, again, err := c.waitField(ctx, step, ps, typed, &picked)
		c.asks.close(ps.p)
		switch {
		case err != nil:
			c.closeWith(ctx, ps, endLine(ctx, err))
			return fieldOutcome{}, err
		case again != "":
			c.closeWith(ctx, ps, "⚠️ Not taken: "+again)
			retry = again
			continue
		}
		c.closeWith(ctx, ps, out.line(f))
		return out.fieldOutcome, nil
	}
}

func (s fieldStep) chat() chat.Place { return s.place }

// settled is a field's outcome with who settled it and how it shows.
type settled struct {
	fieldOutcome
	label string // the answer in words ("" for a typed text)
}

func (s settled) line(f chat.ElicitField) string {
	switch {
	case s.action == choiceDecline:
		return "❌ Declined by " + s.by + "."
	case s.action != "":
		return "Cancelled by " + s.by + "."
	case !s.set && f.Default != nil:
		return "→ The default (" + valueText(f, f.Default) + "), " + s.by + "."
	case !s.set:
		return "→ Skipped by " + s.by + "."
	case s.label == "":
		return "→ Answered by " + s.by + "."
	}
	return "→ " + s.label + " (" + s.by + ")"
}

// waitField waits for the answer to a posed field: a press, a typed
// message, or ctx's end. again is the reason a typed answer (or a
// multiple choice's Done) was not taken.
func (c *Chat) waitField(ctx context.Context, step fieldStep, ps *posed, typed *listener, picked *[]string) (out settled, again string, err error) {
	f := step.field
	for {
		select {
		case <-ctx.Done():
			return settled{}, "", context.Cause(ctx)
		case t := <-typed.ch:
			v, err := f.ParseAnswer(t.text)
			if err != nil {
				return settled{}, sentence(err.Error()), nil
			}
			label := ""
			if f.Kind == chat.FieldBoolean || f.Kind == chat.FieldChoice || f.Kind == chat.FieldMultiChoice {
				label = valueText(f, v) // a choice typed: as the buttons say it
			}
			return settled{fieldOutcome: fieldOutcome{value: v, set: true, by: t.name}, label: label}, "", nil
		case a := <-ps.p.answer:
			out := settled{fieldOutcome: fieldOutcome{by: a.Name}}
			switch ch := a.Choice; {
			case ch == choiceDecline || ch == choiceCancel:
				out.action = ch
			case ch == choiceSkip || ch == choiceDefault:
			case ch == choiceYes || ch == choiceNo:
				out.value, out.set, out.label = ch == choiceYes, true, a.Label
			case strings.HasPrefix(ch, choiceValue):
				i, _ := strconv.Atoi(strings.TrimPrefix(ch, choiceValue))
				out.value, out.set, out.label = f.Options[i].Value, true, f.Options[i].Label
			case strings.HasPrefix(ch, choiceToggle):
				i, _ := strconv.Atoi(strings.TrimPrefix(ch, choiceToggle))
				*picked = toggle(*picked, f.Options[i].Value)
				c.updateButtons(ctx, ps, step.buttons(*picked))
				continue
			case ch == choiceDone:
				v := append([]string{}, orderedPicks(f, *picked)...)
				if err := f.Check(v); err != nil {
					return settled{}, sentence(err.Error()), nil
				}
				out.value, out.set, out.label = v, true, valueText(f, v)
			}
			return out, "", nil
		}
	}
}

// updateButtons replaces a posed question's keyboard (a multiple
// choice's ticks), queued and coalesced behind the chat's pace.
func (c *Chat) updateButtons(ctx context.Context, ps *posed, rows [][]Button) {
	kb := ps.p.keyboard(rows)
	place, msgID := ps.place, ps.msgID
	c.tg.Submit(context.WithoutCancel(ctx), place.Chat, "editMessageReplyMarkup", telegram.Paced, "markup:"+strconv.Itoa(msgID), func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.doneTimeout)
		defer cancel()
		_, err := c.tg.API().EditMessageReplyMarkup(ctx, &tgbot.EditMessageReplyMarkupParams{ChatID: place.Chat, MessageID: msgID, ReplyMarkup: kb})
		if err != nil {
			c.log.Warn("question's buttons not updated", "chat", place, "err", c.scrub(err.Error()))
		}
		return err
	})
}

func toggle(picked []string, v string) []string {
	for i, p := range picked {
		if p == v {
			return append(picked[:i:i], picked[i+1:]...)
		}
	}
	return append(picked, v)
}

// orderedPicks is picked in the order of f's options.
func orderedPicks(f chat.ElicitField, picked []string) []string {
	var out []string
	for _, o := range f.Options {
		for _, p := range picked {
			if p == o.Value {
				out = append(out, p)
			}
		}
	}
	return out
}

// sentence is s with a capital letter and a full stop.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// text is the field's message (Telegram HTML); retry, when set, is why the
// last answer was not taken.
func (s fieldStep) text(retry string) string {
	f := s.field
	var b strings.Builder
	if retry != "" {
		fmt.Fprintf(&b, "⚠️ %s Please answer again.\n\n", html.EscapeString(retry))
	}
	need := "optional"
	if f.Required {
		need = "required"
	}
	fmt.Fprintf(&b, "<b>%s</b>", html.EscapeString(f.Label()))
	if s.of > 1 {
		fmt.Fprintf(&b, " (%d of %d, %s)", s.n, s.of, need)
	} else {
		fmt.Fprintf(&b, " (%s)", need)
	}
	if d := strings.TrimSpace(f.Description); d != "" {
		if tgformat.UTF16Len(d) > maxDescription {
			d = tgformat.CutPlain(d, maxDescription)[0] + "…"
		}
		b.WriteString("\n" + html.EscapeString(d))
	}
	if f.Default != nil {
		b.WriteString("\nDefault: " + html.EscapeString(valueText(f, f.Default)))
	}
	b.WriteString("\n<i>" + html.EscapeString(s.hint()) + "</i>")
	return b.String()
}

// hint says how to answer the field.
func (s fieldStep) hint() string {
	f := s.field
	typeIt := "Type your answer."
	if s.group {
		typeIt = "Reply to this message with your answer."
	}
	switch f.Kind {
	case chat.FieldBoolean:
		return "Yes or no."
	case chat.FieldChoice:
		if len(f.Options) > maxOptionButtons {
			return "Type one of: " + optionList(f)
		}
		return "Choose one."
	case chat.FieldMultiChoice:
		h := "Tick any, then press Done."
		if len(f.Options) > maxOptionButtons {
			h = "Type them, separated by commas: " + optionList(f)
		}
		if f.MinItems != nil {
			h += fmt.Sprintf(" At least %d.", *f.MinItems)
		}
		if f.MaxItems != nil {
			h += fmt.Sprintf(" At most %d.", *f.MaxItems)
		}
		return h
	case chat.FieldNumber, chat.FieldInteger:
		what := "a number"
		if f.Kind == chat.FieldInteger {
			what = "a whole number"
		}
		switch {
		case f.Minimum != nil && f.Maximum != nil:
			what += " from " + number(*f.Minimum) + " to " + number(*f.Maximum)
		case f.Minimum != nil:
			what += " of at least " + number(*f.Minimum)
		case f.Maximum != nil:
			what += " of at most " + number(*f.Maximum)
		}
		return strings.TrimSuffix(typeIt, ".") + ": " + what + "."
	}
	h := typeIt
	switch f.Format {
	case "email":
		h = strings.TrimSuffix(h, ".") + ": an email address."
	case "uri":
		h = strings.TrimSuffix(h, ".") + ": a URL, such as https://example.com."
	case "date":
		h = strings.TrimSuffix(h, ".") + ": a date, YYYY-MM-DD."
	case "date-time":
		h = strings.TrimSuffix(h, ".") + ": a date and time, such as 2026-05-01T14:30:00Z."
	}
	switch {
	case f.MinLength != nil && f.MaxLength != nil:
		h += fmt.Sprintf(" %d to %d characters.", *f.MinLength, *f.MaxLength)
	case f.MinLength != nil:
		h += fmt.Sprintf(" At least %d characters.", *f.MinLength)
	case f.MaxLength != nil:
		h += fmt.Sprintf(" At most %d characters.", *f.MaxLength)
	}
	return h
}

func optionList(f chat.ElicitField) string {
	labels := make([]string, len(f.Options))
	for i, o := range f.Options {
		labels[i] = o.Label
	}
	s := strings.Join(labels, ", ")
	if tgformat.UTF16Len(s) > maxDescription {
		s = tgformat.CutPlain(s, maxDescription)[0] + "…"
	}
	return s
}

func number(n float64) string { return strconv.FormatFloat(n, 'g', -1, 64) }

// buttons are the field's keyboard: its values (a boolean's Yes and No, an
// enum's options, a multiple choice's ticks and Done), then Skip or "Use
// the default" when it may be left out, Decline and Cancel.
func (s fieldStep) buttons(picked []string) [][]Button {
	f := s.field
	var rows [][]Button
	switch f.Kind {
	case chat.FieldBoolean:
		rows = append(rows, []Button{{Label: yesLabel, Choice: choiceYes}, {Label: noLabel, Choice: choiceNo}})
	case chat.FieldChoice, chat.FieldMultiChoice:
		if len(f.Options) > maxOptionButtons {
			break // typed
		}
		var opts []Button
		for i, o := range f.Options {
			b := Button{Label: buttonLabel(o.Label), Choice: choiceValue + strconv.Itoa(i)}
			if f.Kind == chat.FieldMultiChoice {
				tick := "☐ "
				if contains(picked, o.Value) {
					tick = "☑ "
				}
				b = Button{Label: tick + buttonLabel(o.Label), Choice: choiceToggle + strconv.Itoa(i)}
			}
			opts = append(opts, b)
		}
		rows = append(rows, layout(opts)...)
		if f.Kind == chat.FieldMultiChoice {
			rows = append(rows, []Button{{Label: doneLabel, Choice: choiceDone}})
		}
	}
	var last []Button
	switch {
	case f.Default != nil:
		last = append(last, Button{Label: buttonLabel("Use the default (" + valueText(f, f.Default) + ")"), Choice: choiceDefault})
	case !f.Required:
		last = append(last, Button{Label: skipLabel, Choice: choiceSkip})
	}
	last = append(last, Button{Label: declineLabel, Choice: choiceDecline}, Button{Label: cancelLabel, Choice: choiceCancel})
	return append(rows, last)
}

// layout puts buttons two to a row when their labels are short, else one.
func layout(bs []Button) [][]Button {
	short := true
	for _, b := range bs {
		if utf8.RuneCountInString(b.Label) > 18 {
			short = false
		}
	}
	var rows [][]Button
	for i := 0; i < len(bs); i++ {
		if short && i+1 < len(bs) {
			rows = append(rows, []Button{bs[i], bs[i+1]})
			i++
			continue
		}
		rows = append(rows, []Button{bs[i]})
	}
	return rows
}

func buttonLabel(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		s = "(empty)"
	}
	if utf8.RuneCountInString(s) > maxButtonLabel {
		r := []rune(s)
		s = string(r[:maxButtonLabel-1]) + "…"
	}
	return s
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// valueText is a value of f in words: a choice by its label, a boolean as
// yes or no.
func valueText(f chat.ElicitField, v any) string {
	label := func(val string) string {
		for _, o := range f.Options {
			if o.Value == val {
				return o.Label
			}
		}
		return val
	}
	switch x := v.(type) {
	case bool:
		if x {
			return yesLabel
		}
		return noLabel
	case float64:
		return number(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		if f.Kind == chat.FieldChoice {
			return label(x)
		}
		return x
	case []string:
		if len(x) == 0 {
			return "none"
		}
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = label(s)
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprint(v)
}
