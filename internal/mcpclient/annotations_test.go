package mcpclient

import (
	"encoding/json"
	"testing"
)

func TestToolAnnotations(t *testing.T) {
	tests := []struct {
		annotations string // tools/list's "annotations", "" for none
		readOnly    bool
		meaning     string
	}{
		{"", false, "The server says nothing about this tool, so: it may delete or overwrite data and talks to the outside world."},
		{`{"readOnlyHint":true}`, true, "It only reads and talks to the outside world."},
		{`{"readOnlyHint":true,"openWorldHint":false}`, true, "It only reads."},
		{`{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}`, false, "It adds or changes data, deletes nothing."},
		{`{"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`, false, "It may delete or overwrite data and running it twice does no more than once."},
		{`{"title":"Navigate","openWorldHint":true}`, false, "It may delete or overwrite data and talks to the outside world."},
	}
	for _, tt := range tests {
		raw := `{"name":"t","inputSchema":{"type":"object"}`
		if tt.annotations != "" {
			raw += `,"annotations":` + tt.annotations
		}
		tools, _, err := decodeTools("s", []json.RawMessage{json.RawMessage(raw + "}")}, "")
		if err != nil {
			t.Fatal(err)
		}
		a := tools[0].Annotations
		if a.ReadOnly() != tt.readOnly || a.MeaningText() != tt.meaning {
			t.Errorf("%s: read-only %v, %q; want %v, %q", tt.annotations, a.ReadOnly(), a.MeaningText(), tt.readOnly, tt.meaning)
		}
	}
}
