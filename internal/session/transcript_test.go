package session

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// writeTranscript puts lines into chat's transcript before its session
// opens it.
func writeTranscript(t *testing.T, e *env, place chat.Place, content string) string {
	t.Helper()
	dir := e.manager.Private(place)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, transcriptName)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordHandler keeps the records logged at or above a level.
type recordHandler struct {
	mu      sync.Mutex
	level   slog.Level
	records []string
	changed chan struct{} // closed and replaced at each record
}

// waitRecord waits for a record containing substr.
func (h *recordHandler) waitRecord(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		h.mu.Lock()
		if h.changed == nil {
			h.changed = make(chan struct{})
		}
		ch := h.changed
		for _, r := range h.records {
			if strings.Contains(r, substr) {
				h.mu.Unlock()
				return
			}
		}
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no log record with %q: %q", substr, h.Records())
		}
	}
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *recordHandler) WithGroup(string) slog.Handler                { return h }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, b.String())
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
	h.mu.Unlock()
	return nil
}

func (h *recordHandler) Records() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.records...)
}

// Lines that are JSON but not messages the agent can use (parts without
// the field their kind needs) used to crash the whole process with a nil
// dereference in the budget, at every message of the chat and after every
// restart. They are repaired or left out when the transcript is read, with
// one warning for the file.
func TestCorruptedTranscriptIsRepairedOnLoad(t *testing.T) {
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		for _, m := range req.Messages {
			if !validMessage(m) {
				t.Errorf("the model got an invalid message: %+v", m)
			}
		}
		return llm.Response{Text: "re: " + llmtest.LastUserText(req)}, nil
	}
	logs := &recordHandler{level: slog.LevelWarn}
	e := newEnv(t, answer, envOptions{logger: slog.New(logs)})
	writeTranscript(t, e, chat.In(42), strings.Join([]string{
		`{"role":"user","parts":[{"kind":"text","text":"earlier"}]}`,
		`{"role":"user","parts":[{"kind":"tool_result"}]}`,
		`{"role":"assistant","parts":[{"kind":"tool_call"}]}`,
		`{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"c1","name":"echo","arguments":{}}}]}`,
		`{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c1","content":[{"kind":"image"},{"kind":"text","text":"fine"}]}}]}`,
		`{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"nobody-called-me","content":[]}}]}`,
		`{"role":"system","parts":[{"kind":"text","text":"who am I"}]}`,
		`{"role":"assistant","parts":[{"kind":"mystery"},{"kind":"text","text":"a real answer"}]}`,
		`not json at all`,
		`{"role":"assistant","parts":[{"kind":"text","text":"and another"}]}`,
		``,
	}, "\n"))
	e.deliver(chat.In(42), "hi")
	if got := e.chat.waitTexts(t, chat.In(42), 1); got[0] != "re: hi" {
		t.Fatalf("reply = %q", got)
	}
	msgs := e.model.Requests()[0].Messages
	var texts []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch {
			case p.Kind == llm.PartText:
				texts = append(texts, p.Text)
			case p.ToolResult != nil:
				texts = append(texts, "result:"+p.ToolResult.CallID+":"+llmtest.ResultText(*p.ToolResult))
			case p.ToolCall != nil:
				texts = append(texts, "call:"+p.ToolCall.ID)
			}
		}
	}
	want := "earlier|call:c1|result:c1:fine|a real answer|and another|hi"
	if got := strings.Join(texts, "|"); got != want {
		t.Errorf("history sent to the model:\n got %s\nwant %s", got, want)
	}
	var warnings int
	for _, r := range logs.Records() {
		if strings.Contains(r, "transcript") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d warnings about the transcript, want 1 for the file: %q", warnings, logs.Records())
	}

	// The chat goes on, and the next load is as good.
	e.deliver(chat.In(42), "again")
	if got := e.chat.waitTexts(t, chat.In(42), 2); got[1] != "re: again" {
		t.Errorf("second reply = %q", got[1])
	}
}

// Whatever bytes a transcript holds, reading it never panics, and every
// message it yields is one the agent can use: valid by validMessage, each
// tool result answering a call of the message before it, and safe for the
// budget and the request repairs.
func FuzzReadTranscript(f *testing.F) {
	f.Add([]byte(`{"role":"user","parts":[{"kind":"tool_result"}]}` + "\n" + `{"role":"assistant","parts":[{"kind":"tool_call"}]}` + "\n"))
	f.Add([]byte(`{"role":"user","parts":[{"kind":"text","text":"hi"}]}` + "\n" +
		`{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"1","name":"x","arguments":{"a":1}}}]}` + "\n" +
		`{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"1","name":"x","content":[{"kind":"image","image":{"mime_type":"image/png","path":"images/a.png"}}]}}]}` + "\n"))
	f.Add([]byte(`{"role":"user","parts":[{"kind":"te`))
	f.Add([]byte("\n\n\r\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"1","name":"x","arguments":"{"}},{"kind":"image","image":{"data":"AAAA"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := readTranscriptFrom(bytes.NewReader(data), "fuzz", slog.New(slog.DiscardHandler))
		for i, m := range msgs {
			if !validMessage(m) {
				t.Fatalf("message %d is not valid: %+v", i, m)
			}
			for _, p := range m.Parts {
				if p.ToolResult == nil {
					continue
				}
				if i == 0 || !callsOf(msgs[i-1])[p.ToolResult.CallID] {
					t.Fatalf("message %d answers call %q, which the message before did not make", i, p.ToolResult.CallID)
				}
			}
			agent.EstimateMessage(m)
		}
		req := agent.MergeAdjacent(agent.RepairToolCalls(agent.FitBudget(msgs, len(msgs), 10, 50)))
		for i, m := range req {
			if !validMessage(m) {
				t.Fatalf("request message %d is not valid: %+v", i, m)
			}
		}
	})
}

func callsOf(m llm.Message) map[string]bool {
	out := map[string]bool{}
	for _, p := range m.Parts {
		if p.ToolCall != nil {
			out[p.ToolCall.ID] = true
		}
	}
	return out
}

// A line longer than the reader takes (a 70 MB error text once made one)
// is skipped with one warning; the messages after it are read, now and
// after every restart.
func TestTranscriptLongLineIsSkippedNotTheRest(t *testing.T) {
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: "re: " + llmtest.LastUserText(req)}, nil
	}
	logs := &recordHandler{level: slog.LevelWarn}
	e := newEnv(t, answer, envOptions{logger: slog.New(logs)})
	path := writeTranscript(t, e, chat.In(43), `{"role":"user","parts":[{"kind":"text","text":"before"}]}`+"\n")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := `{"role":"assistant","parts":[{"kind":"text","text":"` + strings.Repeat("x", 64<<20+1) + `"}]}` + "\n"
	if _, err := f.WriteString(long + `{"role":"assistant","parts":[{"kind":"text","text":"after"}]}` + "\n" +
		`{"role":"user","parts":[{"kind":"text","text":"later"}]}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e.deliver(chat.In(43), "now")
	e.chat.waitTexts(t, chat.In(43), 1)
	var texts []string
	for _, m := range e.model.Requests()[0].Messages {
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
		}
	}
	if got, want := strings.Join(texts, "|"), "before|after|later|now"; got != want {
		t.Errorf("history = %s, want %s", got, want)
	}
	if n := len(logs.Records()); n != 1 {
		t.Errorf("%d warnings, want 1: %q", n, logs.Records())
	}
}

// readTranscriptFrom decodes a transcript and logs, once for the file,
// what it skipped or repaired (see decodeTranscript).
func readTranscriptFrom(r io.Reader, path string, logger *slog.Logger) []llm.Message {
	msgs, report := decodeTranscript(r)
	report.log(logger, path)
	return msgs
}

// decodeTranscript decodes a transcript read from r, as decodeLines.
func decodeTranscript(r io.Reader) ([]llm.Message, readReport) {
	return decodeLines(func(fn func([]byte, int64)) error { return store.Lines(r, maxTranscriptLine, fn) })
}
