package mcpclient

import (
	"bytes"
	"encoding/json"
	"testing"
)

// scanEnvelope must agree with encoding/json on every valid message.
func FuzzScanEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","id":"abc","method":"ping"}`,
		` { "id" : 1 , "result" : [ 1 , "}" ] } `,
		`{"result":{"a":"\"}"},"id":2,"id":3}`,
		`{"\u0069d":5,"result":{}}`,
		`{}`, `[]`, `nope`, `{"id":}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := scanEnvelope(line)
		var ref struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		// encoding/json matches keys case-insensitively; the protocol's keys
		// are lower-case, so compare only messages whose keys are exact.
		err := json.Unmarshal(line, &ref)
		if !json.Valid(line) {
			if ok {
				t.Fatalf("invalid JSON accepted: %q", line)
			}
			return
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			if ok {
				t.Fatalf("non-object accepted: %q", line)
			}
			return
		}
		if !ok || err != nil {
			return // a type mismatch for encoding/json (e.g. "method":1) is fine to disagree on
		}
		if bytes.Contains(bytes.ToLower(line), []byte(`"id"`)) != bytes.Contains(line, []byte(`"id"`)) {
			return
		}
		if string(e.id) != string(ref.ID) {
			t.Errorf("id %q, encoding/json %q in %q", e.id, ref.ID, line)
		}
		if string(e.result) != string(ref.Result) {
			t.Errorf("result %q, encoding/json %q in %q", e.result, ref.Result, line)
		}
	})
}

func TestScanEnvelope(t *testing.T) {
	e, ok := scanEnvelope([]byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[]}}`))
	if !ok || string(e.id) != "42" || string(e.result) != `{"content":[]}` || e.method {
		t.Errorf("envelope = %+v %v", e, ok)
	}
	if _, ok := scanEnvelope([]byte(`{"id":1,`)); ok {
		t.Error("a torn line was accepted")
	}
}

func TestEncodeRequestNames(t *testing.T) {
	for _, name := range []string{"echo", "weird.name/x", `quote"d`, "t\u00e9", "émoji 🔧", "<b>&"} {
		line, err := appendRequest(nil, &message{id: 3, method: "tools/call", tool: name, args: json.RawMessage("{\"a\": 1}")})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			ID     int64 `json:"id"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &got); err != nil || got.Params.Name != name || got.ID != 3 ||
			string(got.Params.Arguments) != `{"a": 1}` || bytes.Count(line, []byte("\n")) != 1 {
			t.Errorf("%q → %s (%v)", name, line, err)
		}
	}
}
