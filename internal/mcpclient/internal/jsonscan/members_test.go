package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// String must decode every JSON string as encoding/json does.
func FuzzJSONString(f *testing.F) {
	for _, seed := range []string{
		`"plain"`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`,
		`"\ud83dx"`, `"\ud83d\n"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, "\"bad \xff utf-8\"", "\"\xed\xa0\x80\"",
		`"- link \"Docs\" [ref=e12]:\n  - /url: https://example.test"`, `"é\\"`, `12`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !Valid(v) {
			return
		}
		v = bytes.TrimSpace(v)
		var want string
		wantOK := v[0] == '"' && json.Unmarshal(v, &want) == nil // null decodes too, as nothing
		got, ok := String(v)
		if ok != wantOK || got != want {
			t.Fatalf("String(%q) = %q %v, encoding/json %q %v", v, got, ok, want, wantOK)
		}
	})
}

// ObjectMembers and EachMember must list an object's members as
// encoding/json's tokenizer sees them: the same keys in the same order, each
// value the bytes encoding/json takes for it.
func FuzzObjectMembers(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","$schema":"x","properties":{"a":{"type":"string"}}}`,
		` { "a" : 1 , "b" : [ 1 , "}" ] , "c\"d" : {"e":null} } `,
		`{"\u0061":true,"a":false}`, `{}`, `[]`, `"x"`, `{"a":}`, `{"a":"\\"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		members, ok := ObjectMembers(b)
		dec := json.NewDecoder(bytes.NewReader(b))
		tok, err := dec.Token()
		isObject := json.Valid(b) && err == nil && tok == json.Delim('{')
		if ok != isObject {
			t.Fatalf("ObjectMembers(%q) ok = %v, encoding/json says object = %v", b, ok, isObject)
		}
		if !ok {
			return
		}
		var each []string
		EachMember(b, func(key, val []byte) bool {
			each = append(each, string(val))
			return true
		})
		if len(each) != len(members) {
			t.Fatalf("EachMember saw %d members, ObjectMembers %d in %q", len(each), len(members), b)
		}
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(members) {
				t.Fatalf("encoding/json sees more members than %d in %q", len(members), b)
			}
			m := members[i]
			if m.Key != tok.(string) || string(b[m.ValStart:m.End]) != string(v) || each[i] != string(v) {
				t.Fatalf("member %d: key %q value %q (each %q); encoding/json %q %q", i, m.Key, b[m.ValStart:m.End], each[i], tok, v)
			}
		}
	})
}
