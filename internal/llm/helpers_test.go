package llm_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// A schema whose keys are not in sorted order: a map would reorder them.
const weatherSchema = `{"type":"object","properties":{"zip":{"type":"string"},"city":{"type":"string","description":"City name"},"days":{"type":"integer","minimum":1}},"required":["city"],"additionalProperties":false}`

var weatherTool = llm.Tool{Name: "get_weather", Description: "Current weather", Schema: json.RawMessage(weatherSchema)}

var clockTool = llm.Tool{Name: "clock", Description: "The time", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}

// png is a tiny payload; the adapters do not decode images.
var png = []byte{0x89, 'P', 'N', 'G', 1, 2, 3}

const pngBase64 = "iVBORwECAw=="

func text(s string) llm.Part { return llm.Part{Kind: llm.PartText, Text: s} }

func user(parts ...llm.Part) llm.Message { return llm.Message{Role: llm.RoleUser, Parts: parts} }

func assistant(parts ...llm.Part) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: parts}
}

func call(id, name, args string) llm.Part {
	return llm.Part{Kind: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func result(id, name string, isError bool, content ...llm.Part) llm.Part {
	return llm.Part{Kind: llm.PartToolResult, ToolResult: &llm.ToolResult{CallID: id, Name: name, IsError: isError, Content: content}}
}

func image(data []byte) llm.Part {
	return llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: "image/png", Data: data}}
}

// assertJSON compares got (decoded JSON) with the JSON text want.
func assertJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		e, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, e)
	}
}

// asError returns err as an *llm.Error, failing the test if it is not one.
func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not an *llm.Error", err, err)
	}
	return e
}

func assertCalls(t *testing.T, got []llm.ToolCall, want ...llm.ToolCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("tool calls = %+v, want %d", got, len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name {
			t.Errorf("call %d = %s %s, want %s %s", i, got[i].ID, got[i].Name, want[i].ID, want[i].Name)
		}
		var g, w any
		if err := json.Unmarshal(got[i].Arguments, &g); err != nil {
			t.Errorf("call %d arguments %s: %v", i, got[i].Arguments, err)
		}
		_ = json.Unmarshal(want[i].Arguments, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("call %d arguments = %s, want %s", i, got[i].Arguments, want[i].Arguments)
		}
	}
}

// redirectTo returns a client that sends every request to the server at
// base, whatever host its URL names.
func redirectTo(base string) *http.Client {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, ""
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
