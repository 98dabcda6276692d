package jsonscan

import (
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
		// The reference: encoding/json into a map, which matches keys
		// exactly (the protocol's keys are lower-case; encoding/json's
		// struct decoding would also take "Result") and keeps the last of
		// a repeated key, as the scanner does.
		var ref map[string]json.RawMessage
		err := json.Unmarshal(line, &ref)
		isObject := err == nil && ref != nil
		if ok != isObject {
			t.Fatalf("ScanEnvelope(%q) ok = %v, encoding/json: object %v (%v)", line, ok, isObject, err)
		}
		if !ok {
			return
		}
		_, method := ref["method"]
		if string(e.ID) != string(ref["id"]) || string(e.Result) != string(ref["result"]) ||
			string(e.Error) != string(ref["error"]) || e.Method != method {
			t.Errorf("envelope %+v of %q; encoding/json: id %q result %q error %q method %v",
				e, line, ref["id"], ref["result"], ref["error"], method)
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
