package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
)

// Arguments that are not a JSON object (a model cut off at its token limit
// sends half an object) are answered with an error result that says so,
// and the call is not made; empty and null arguments mean {}. They come as
// the model wrote them or, from the llm adapters, as a JSON string holding
// text that is not JSON; either way the conversation can still be stored.
func TestMalformedToolArguments(t *testing.T) {
	cases := []struct {
		tool, args string
		want       string // in the error result; "" for a call that is made
		sent       string // the arguments the server receives
	}{
		{"echo", `{"text": "notes/x.txt"`, "invalid arguments for echo: not valid JSON (unexpected end of input)", ""},
		{"echo", `{"text": "a"} {"text": "b"}`, "invalid arguments for echo: not valid JSON (invalid character '{' after top-level value", ""},
		{"echo", `{"text": 'a'}`, "invalid arguments for echo: not valid JSON (invalid character '\\'' looking for beginning of value", ""},
		{"echo", `"{\"text\": \"notes/x.txt\""`, "invalid arguments for echo: not valid JSON (unexpected end of input)", ""},
		{"echo", `"[1, 2"`, "invalid arguments for echo: not valid JSON (unexpected end of input)", ""},
		{"echo", `["notes/x.txt"]`, "invalid arguments for echo: an array, not a JSON object", ""},
		{"echo", `"notes/x.txt"`, "invalid arguments for echo: a string, not a JSON object", ""},
		{"echo", `42`, "invalid arguments for echo: a number, not a JSON object", ""},
		{"echo", `{"text": "whole"}`, "", `{"text":"whole"}`},
		{"echo", ` {"text": "spaced"} `, "", `{"text":"spaced"}`},
		{"echo", ``, "", `{}`},
		{"echo", `null`, "", `{}`},
		{"echo", " null\n", "", `{}`},
		{SendToolName, `{"path": "notes/x.txt"`, "invalid arguments for send: not valid JSON (unexpected end of input)", ""},
		{SendToolName, `[]`, "invalid arguments for send: an array, not a JSON object", ""},
		{SendToolName, `{"path": 5}`, `invalid arguments for send: "path" must be a string, not a number`, ""},
		{SendToolName, `{"path": "a.txt", "caption": ["x"]}`, `invalid arguments for send: "caption" must be a string, not an array`, ""},
	}
	var mu sync.Mutex
	var results []llm.ToolResult
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			mu.Lock()
			results = res
			mu.Unlock()
			return llm.Response{Text: "ok"}, nil
		}
		var calls []llm.ToolCall
		for i, c := range cases {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprint(i), Name: c.tool, Arguments: []byte(c.args)})
		}
		return llm.Response{ToolCalls: calls}, nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeLogCalls}})
	e.deliver(chat.In(30), "go")
	e.chat.waitTexts(t, chat.In(30), 1)

	mu.Lock()
	defer mu.Unlock()
	if len(results) != len(cases) {
		t.Fatalf("%d results for %d calls", len(results), len(cases))
	}
	var wantSent []string
	for i, c := range cases {
		r, text := results[i], llmtest.ResultText(results[i])
		if c.want == "" {
			wantSent = append(wantSent, c.sent)
			if r.IsError {
				t.Errorf("%s %q: error %q, want the call made", c.tool, c.args, text)
			}
			continue
		}
		if !r.IsError || !strings.Contains(text, c.want) || !strings.Contains(text, "the call was not made; send ") {
			t.Errorf("%s %q: result %v %q, want an error with %q, that the call was not made and what to send", c.tool, c.args, r.IsError, text, c.want)
		}
		if strings.Contains(c.want, "not valid JSON") && !strings.Contains(text, "send the complete JSON object") {
			t.Errorf("%s %q: %q does not ask for the complete object", c.tool, c.args, text)
		}
	}
	// Every call the server saw was logged before it answered, so the log
	// is complete now.
	var sent []string
	for _, ev := range fakemcp.Filter(fakemcp.ReadLog(t, e.mcpLog), fakemcp.EventCall) {
		sent = append(sent, string(ev.Arguments))
	}
	if strings.Join(sent, " ") != strings.Join(wantSent, " ") {
		t.Errorf("the server received %q, want only the whole objects %q", sent, wantSent)
	}
	if files := e.chat.Files(chat.In(30)); len(files) != 0 {
		t.Errorf("files sent: %v", files)
	}
}

// callArguments accepts exactly what encoding/json decodes as an object
// (and nothing, or null, as {}), and passes it on unchanged but for
// surrounding space.
func FuzzCallArguments(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"path": "notes/x.txt"`, `{"a":1} {"b":2}`, `[1]`, `"x"`,
		`"{\"a\": 1"`, `"{\"a\": 1}"`, " {\"a\":\"\\u00e9\"}\n", `{"a":1,}`, `nul`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, problem := callArguments("tool", raw)
		trimmed := bytes.TrimSpace(raw)
		var obj map[string]json.RawMessage
		isObject := len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &obj) == nil
		empty := len(trimmed) == 0 || string(trimmed) == "null"
		switch {
		case empty && (problem != "" || string(got) != "{}"):
			t.Fatalf("%q: %q %q, want {}", raw, got, problem)
		case isObject && (problem != "" || !bytes.Equal(got, trimmed)):
			t.Fatalf("%q: %q %q, want the object", raw, got, problem)
		case !empty && !isObject && (got != nil || !strings.Contains(problem, "the call was not made")):
			t.Fatalf("%q: %q %q, want an error", raw, got, problem)
		}
	})
}

// The catalogue keeps a server's schema verbatim; the model gets it
// without the top-level $schema, which providers refuse or misread.
func TestModelGetsSchemaWithoutDollarSchema(t *testing.T) {
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"q":{"type":"string"}}}`)
	tools := entries([]mcpclient.Tool{
		{Server: "s", MCPName: "stable", Name: "stable", InputSchema: schema},
		{Server: "s", MCPName: "loaded", Name: "loaded", InputSchema: schema},
	}...)
	ts := newToolset(tools[:1], ToolPlan{}, nil)
	for _, spec := range ts.specs(tools[1:]) {
		if spec.Name != "stable" && spec.Name != "loaded" {
			continue // a built-in
		}
		if want := `{"type":"object","properties":{"q":{"type":"string"}}}`; string(spec.Schema) != want {
			t.Errorf("%s: the model gets %s, want %s", spec.Name, spec.Schema, want)
		}
	}
	if !bytes.Contains(tools[0].InputSchema, []byte(`"$schema"`)) {
		t.Error("the catalogue's schema lost $schema")
	}
}
