package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzValidJSON(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		` [1, -0.5e+3, 0, true, false, null, "\u00e9\n\"", {}] `,
		`{"a":}`, `{"a" 1}`, `[1,]`, `{,}`, `01`, `-`, `1.`, `1e`, `.5`, `"\x"`, `"\u12g4"`, "\"\x01\"",
		"\"\xff\xfe\"", `tru`, `nul`, `{"a":1}{}`, `"unterminated`, ``, ` `, `[`, `]`, `{"a":[{"b":null}]}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hi"}]}}` + "\n")
	snapshot := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat(`- link \"Docs\" [ref=e12]:\n  - /url: https://example.test/docs\n`, 600) + `"}]}`)
	for _, bc := range []struct {
		name string
		b    []byte
	}{{"line", line}, {"snapshot-50KB", snapshot}} {
		b.Run(bc.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(bc.b)))
			for b.Loop() {
				Valid(bc.b)
			}
		})
		b.Run(bc.name+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(bc.b)))
			for b.Loop() {
				json.Valid(bc.b)
			}
		})
	}
}
