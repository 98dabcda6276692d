package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// ScanEnvelope must agree with encoding/json on every valid message.
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
		e, ok := ScanEnvelope(line)
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
		if string(e.ID) != string(ref.ID) {
			t.Errorf("id %q, encoding/json %q in %q", e.ID, ref.ID, line)
		}
		if string(e.Result) != string(ref.Result) {
			t.Errorf("result %q, encoding/json %q in %q", e.Result, ref.Result, line)
		}
	})
}

func TestScanEnvelope(t *testing.T) {
	e, ok := ScanEnvelope([]byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[]}}`))
	if !ok || string(e.ID) != "42" || string(e.Result) != `{"content":[]}` || e.Method {
		t.Errorf("Envelope = %+v %v", e, ok)
	}
	if _, ok := ScanEnvelope([]byte(`{"id":1,`)); ok {
		t.Error("a torn line was accepted")
	}
}
