package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// The choices of an approval question.
const (
	choiceApprove = "approve"
	choiceDeny    = "deny"
	choiceAlways  = "always"
)

// argsFile is the name of the document that carries arguments too long
// for the approval message.
const argsFile = "arguments.json"

// approvalRefusal is the alert for a group member who did not start the
// turn (and is no admin).
const approvalRefusal = "Only the person whose message started this, or an admin, can decide."

// Approve asks the chat whether a tool call may run (session.Approver):
// a message naming the server and the tool, what its annotations say it
// does, and its arguments as pretty JSON — complete, or as much as fits
// with the whole of them sent just before as arguments.json —, with the
// buttons Approve, Deny and, when offered, Always in this chat. In a
// private chat its user decides; in a group the user whose message
// started the turn, or an admin. Nobody answering within req.Timeout, and
// the turn's end (/stop), deny it; the message then says so.
func (c *Chat) Approve(ctx context.Context, place chat.Place, req session.ApprovalRequest) (session.Approval, error) {
	text, full := approvalText(req)
	if full != nil {
		file := session.OutgoingFile{Name: argsFile, Content: bytes.NewReader(full), Size: int64(len(full))}
		if err := c.SendFile(ctx, place, file, "The arguments of "+req.Tool+", in full"); err != nil {
			return session.Denied, err
		}
	}
	buttons := [][]Button{{{Label: "✅ Approve", Choice: choiceApprove}, {Label: "❌ Deny", Choice: choiceDeny}}}
	if req.OfferAlways {
		buttons = append(buttons, []Button{{Label: "Always in this chat", Choice: choiceAlways}})
	}
	q := Question{Text: text, HTML: true, Buttons: buttons, Timeout: req.Timeout, Refusal: approvalRefusal,
		Outcome: func(a Answer, err error) string { return approvalOutcome(req, a, err) }}
	if place.Chat < 0 { // a group: not everyone in it may decide
		q.MayAnswer = func(user int64) bool { return user == req.UserID || c.isAdmin(user) }
	}
	a, err := c.Ask(ctx, place, q)
	switch {
	case errors.Is(err, ErrNoAnswer):
		return session.Denied, fmt.Errorf("%w within %s", session.ErrNoApproval, session.DurationText(req.Timeout))
	case err != nil:
		return session.Denied, err
	}
	switch a.Choice {
	case choiceApprove:
		return session.Approved, nil
	case choiceAlways:
		return session.ApprovedAlways, nil
	}
	return session.Denied, nil
}

// approvalText is the approval message (Telegram HTML) and, when the
// arguments do not fit it, their full pretty JSON for a document.
func approvalText(req session.ApprovalRequest) (string, []byte) {
	var head strings.Builder
	head.WriteString("🔐 <b>May I run this tool?</b>\n")
	fmt.Fprintf(&head, "Server <b>%s</b>, tool <code>%s</code>.\n", html.EscapeString(req.Server), html.EscapeString(req.Tool))
	head.WriteString(html.EscapeString(req.Annotations.MeaningText()))
	pretty := prettyJSON(req.Arguments)
	if pretty == "{}" {
		return head.String() + "\nNo arguments.", nil
	}
	room := tgformat.MaxMessageUTF16 - maxOutcome - tgformat.UTF16Len(htmlText(head.String())) - 100
	if tgformat.UTF16Len(pretty) <= room {
		return head.String() + "\n<pre><code class=\"language-json\">" + html.EscapeString(pretty) + "</code></pre>", nil
	}
	shown := tgformat.CutPlain(pretty, room)[0]
	return head.String() + "\nThe arguments (in full in " + argsFile + " above) begin:\n<pre><code class=\"language-json\">" +
		html.EscapeString(shown) + "\n…</code></pre>", []byte(pretty + "\n")
}

// prettyJSON is raw indented, or raw as it is when it is not JSON.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// approvalOutcome is the line the approval message ends with.
func approvalOutcome(req session.ApprovalRequest, a Answer, err error) string {
	switch {
	case errors.Is(err, ErrNoAnswer):
		return "⌛ No answer within " + session.DurationText(req.Timeout) + ": denied."
	case errors.Is(err, context.Canceled):
		return "⏹ Stopped: not run."
	case err != nil:
		return "Not run."
	case a.Choice == choiceApprove:
		return "✅ Approved by " + a.Name + "."
	case a.Choice == choiceAlways:
		return "✅ Approved by " + a.Name + ", for every call of " + req.Tool + " in this chat."
	}
	return "❌ Denied by " + a.Name + "."
}
