package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

func TestMemoryArguments(t *testing.T) {
	tests := []struct {
		args    string
		want    memoryArgs
		problem string
	}{
		{args: `{"action":"add","text":"Ana"}`, want: memoryArgs{Action: "add", Text: "Ana"}},
		{args: `{"action":" LIST "}`, want: memoryArgs{Action: "list"}},
		{args: `{"action":"remove","text":"2"}`, want: memoryArgs{Action: "remove", Text: "2"}},
		{args: `{"action":"add"}`, problem: "add needs text"},
		{args: `{"action":"remove","text":"  "}`, problem: "remove needs text"},
		{args: `{"action":"forget","text":"a"}`, problem: "action must be add, remove or list"},
		{args: `{"text":"a"}`, problem: "action must be add, remove or list"},
		{args: `{"action":1}`, problem: "must be strings"},
		{args: `["add"]`, problem: "not a JSON object"},
	}
	for _, tt := range tests {
		got, problem := memoryArguments(json.RawMessage(tt.args))
		if tt.problem == "" && (problem != "" || got != tt.want) {
			t.Errorf("%s: %+v, %q; want %+v", tt.args, got, problem, tt.want)
		}
		if tt.problem != "" && !strings.Contains(problem, tt.problem) {
			t.Errorf("%s: problem %q, want one with %q", tt.args, problem, tt.problem)
		}
	}
}

// callMemory calls the chat's memory tool as its registry would.
func callMemory(t *testing.T, e *env, chatID int64, args string) (string, bool) {
	t.Helper()
	s, err := e.manager.get(chat.In(chatID))
	if err != nil {
		t.Fatal(err)
	}
	res, err := memoryTool{s}.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range res.Parts {
		b.WriteString(p.Text)
	}
	return b.String(), res.IsError
}

// What the tool answers: saved, a duplicate, not found, full, a secret.
// A note with a secret the redactor knows is refused without repeating it,
// and nothing is written.
func TestMemoryTool(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	e := newEnv(t, nil, envOptions{secrets: []string{secret}})
	steps := []struct {
		args    string
		want    string
		isError bool
	}{
		{args: `{"action":"list"}`, want: "Memory of this chat: none."},
		{args: `{"action":"add","text":"my key is ` + secret + `"}`, want: "not saved: the text contains a secret this bot knows", isError: true},
		{args: `{"action":"add","text":"Name: Ana"}`, want: "Saved as note 1 (9 of 4096 bytes used, 1 of 50 notes)."},
		{args: `{"action":"add","text":"Locker code 4711"}`, want: "Saved as note 2"},
		{args: `{"action":"add","text":"name: ana"}`, want: "Already kept as note 1: nothing changed."},
		{args: `{"action":"list"}`, want: "Memory of this chat: \n1. Name: Ana\n2. Locker code 4711"},
		{args: `{"action":"remove","text":"3"}`, want: "no note matches that text or number", isError: true},
		{args: `{"action":"remove","text":"1"}`, want: "Removed note 1 (\"Name: Ana\"); 16 of 4096 bytes used, 1 of 50 notes. The notes now: \n1. Locker code 4711"},
		{args: `{"action":"add","text":"` + strings.Repeat("z", MemoryMaxEntry+1) + `"}`, want: "a note holds at most 512 bytes", isError: true},
	}
	for _, st := range steps {
		got, isError := callMemory(t, e, 5, st.args)
		if !strings.Contains(got, st.want) || isError != st.isError {
			t.Errorf("%s: %q (error %v), want %q (error %v)", st.args, got, isError, st.want, st.isError)
		}
		if strings.Contains(got, secret) {
			t.Errorf("%s: the answer repeats the secret: %q", st.args, got)
		}
	}
	list, err := e.manager.Memory(chat.In(5))
	if err != nil || !slices.Equal(texts(list), []string{"Locker code 4711"}) {
		t.Errorf("memory %q, %v", texts(list), err)
	}
	data, _ := os.ReadFile(memoryPath(e.manager.Private(chat.In(5))))
	if strings.Contains(string(data), secret) {
		t.Error("the secret reached the file")
	}
	// Full: the answer says so and what to do.
	for i := 0; ; i++ {
		got, isError := callMemory(t, e, 5, fmt.Sprintf(`{"action":"add","text":"%03d %s"}`, i, strings.Repeat("f", 400)))
		if isError {
			if !strings.Contains(got, "not saved: the memory is full") || !strings.Contains(got, "/memory") {
				t.Errorf("full: %q", got)
			}
			break
		}
	}
}

// The memory section comes after the fixed text, the servers' sections
// and the deferred tools, before the date; the prompt is the same as long
// as the notes are, and a change of notes leaves the prefix before them.
func TestMemoryInSystemPrompt(t *testing.T) {
	sections := []PromptSection{{Server: "fake", Text: "## Fake\nfake tools"}}
	active := map[string]bool{"fake": true}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	notes := []MemoryEntry{{Text: "Name: Ana"}, {Text: "likes tea"}}
	mem := memorySection(notes, false, nil)
	got := buildSystemPrompt("BASE", sections, active, "## More tools\n- x", mem, now)
	order := []string{"BASE", "## Fake", "## More tools", "## Memory", "only when the user asks", "1. Name: Ana\n2. likes tea", "Current date:"}
	at := -1
	for _, s := range order {
		i := strings.Index(got, s)
		if i <= at {
			t.Fatalf("%q is not after what comes before it in:\n%s", s, got)
		}
		at = i
	}
	if again := buildSystemPrompt("BASE", sections, active, "## More tools\n- x", memorySection(slices.Clone(notes), false, nil), now); again != got {
		t.Error("the same notes gave another prompt")
	}
	changed := buildSystemPrompt("BASE", sections, active, "## More tools\n- x", memorySection(notes[:1], false, nil), now)
	head := got[:strings.Index(got, "1. Name: Ana")]
	if !strings.HasPrefix(changed, head) {
		t.Errorf("a change of notes changed the prefix before them:\n%s", changed)
	}
	empty := memorySection(nil, false, nil)
	if !strings.Contains(empty, "never on your own initiative") || !strings.HasSuffix(empty, "No notes are kept yet.") {
		t.Errorf("no notes: %q", empty)
	}
	if s := memorySection(notes, true, nil); strings.Contains(s, "Ana") || !strings.Contains(s, "could not be read") {
		t.Errorf("unreadable: %q", s)
	}
}

// memoryModel adds a note when the user says "remember …", and answers
// with the system prompt's notes otherwise.
func memoryModel(_ context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	for _, p := range last.Parts {
		if p.ToolResult != nil {
			return llm.Response{Text: "noted"}, nil
		}
		if note, ok := strings.CutPrefix(p.Text, "remember "); ok {
			args, _ := json.Marshal(memoryArgs{Action: "add", Text: note})
			return toolCall("m1", MemoryToolName, string(args)), nil
		}
	}
	return llm.Response{Text: "ok"}, nil
}

// A note the model adds is in the system prompt of the chat's next
// requests: after /new, and after a restart (a new manager on the same
// data directory); not in another chat's.
func TestMemoryAcrossNewAndRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, memoryModel, envOptions{dataDir: dir})
	e.deliver(chat.In(1), "remember Name: Ana")
	e.chat.waitTexts(t, chat.In(1), 1)
	if err := e.manager.Reset(context.Background(), chat.In(1)); err != nil {
		t.Fatal(err)
	}
	e.deliver(chat.In(1), "who am I?")
	e.chat.waitTexts(t, chat.In(1), 2)
	e.deliver(chat.In(2), "who am I?")
	e.chat.waitTexts(t, chat.In(2), 1)
	reqs := e.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if strings.Contains(reqs[0].System, "Ana") || !strings.Contains(reqs[0].System, "No notes are kept yet.") {
		t.Errorf("before the note:\n%s", reqs[0].System)
	}
	if after := reqs[2].System; !strings.Contains(after, "1. Name: Ana") || len(reqs[2].Messages) != 1 {
		t.Errorf("after /new (%d messages):\n%s", len(reqs[2].Messages), after)
	}
	if strings.Contains(reqs[3].System, "Ana") {
		t.Errorf("another chat's prompt holds the note:\n%s", reqs[3].System)
	}
	e.close()

	e2 := newEnv(t, memoryModel, envOptions{dataDir: dir})
	e2.deliver(chat.In(1), "and now?")
	e2.chat.waitTexts(t, chat.In(1), 1)
	if r := e2.model.Requests(); len(r) != 1 || !strings.Contains(r[0].System, "1. Name: Ana") {
		t.Errorf("after a restart: %+v", r)
	}
}

// The tool's calls and /memory's (the Manager's methods, from the bot's
// worker) come at once: every change is kept or undone as a whole, and
// the file stays readable.
func TestMemoryConcurrent(t *testing.T) {
	e := newEnv(t, nil, envOptions{})
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if got, isError := callMemory(t, e, 3, fmt.Sprintf(`{"action":"add","text":"note %d"}`, i)); isError {
				t.Errorf("add %d: %s", i, got)
			}
		})
		wg.Go(func() {
			if _, err := e.manager.Memory(chat.In(3)); err != nil {
				t.Errorf("list: %v", err)
			}
			if i%2 == 0 {
				if _, err := e.manager.ForgetMemory(chat.In(3), fmt.Sprintf("note %d", i)); err != nil {
					t.Errorf("forget: %v", err)
				}
			}
		})
	}
	wg.Wait()
	list, err := e.manager.Memory(chat.In(3))
	if err != nil {
		t.Fatal(err)
	}
	got := texts(list)
	for i := range n {
		note := fmt.Sprintf("note %d", i)
		if i%2 == 1 && !slices.Contains(got, note) {
			t.Errorf("%q is lost: %q", note, got)
		}
	}
	seen := map[string]bool{}
	for _, note := range got {
		if seen[note] {
			t.Errorf("%q twice: %q", note, got)
		}
		seen[note] = true
	}
	if n, err := e.manager.ClearMemory(chat.In(3)); err != nil || n != len(got) {
		t.Errorf("clear: %d, %v (had %d)", n, err, len(got))
	}
	if list, err := e.manager.Memory(chat.In(3)); err != nil || len(list) != 0 {
		t.Errorf("after clear: %q, %v", texts(list), err)
	}
}

// The tool is in every request's tool list, on its own lane.
func TestMemoryToolOffered(t *testing.T) {
	var tool chat.Tool = memoryTool{}
	if _, ok := tool.(chat.Sequenced); !ok {
		t.Error("memory is not Sequenced")
	}
	specs := builtinSpecs(builtinTools(nil, nil), false)
	if !slices.ContainsFunc(specs, func(s llm.Tool) bool { return s.Name == MemoryToolName }) {
		t.Errorf("built-ins %+v lack memory", specs)
	}
	if !json.Valid(memorySchema) {
		t.Error("the schema is not JSON")
	}
}
