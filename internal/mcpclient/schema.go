package mcpclient

import (
	"bytes"
	"encoding/json"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// NormalizeSchema returns a tool's inputSchema as the catalogue keeps it:
// the server's bytes verbatim (key order, whitespace and every keyword,
// $schema included, kept; nothing is re-marshalled), except that a
// missing, null, invalid or non-object schema, or an object whose
// top-level "type" is a string other than "object" (MCP requires "object"
// and providers refuse anything else), becomes {"type":"object"}. An object
// without "type" is left as it is.
func NormalizeSchema(raw json.RawMessage) json.RawMessage {
	out, _ := normalize(raw)
	return out
}

// ModelSchema is the schema as the model gets it: NormalizeSchema's, with
// every top-level "$schema" member cut out (a nested one is kept), which
// model providers refuse or misread.
func ModelSchema(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte("schema")) { // "$schema", or an escaped spelling of it
		return NormalizeSchema(raw)
	}
	raw, members := normalize(raw)
	drop := 0
	for _, m := range members {
		if m.Key == "$schema" {
			drop++
		}
	}
	if drop == 0 {
		return raw
	}
	// Rebuild from the original bytes: the text before the first member,
	// the kept members with the separator that followed each, and the text
	// after the last member.
	out := make([]byte, 0, len(raw))
	out = append(out, raw[:members[0].Start]...)
	prev := -1
	for i, m := range members {
		if m.Key == "$schema" {
			continue
		}
		if prev >= 0 {
			out = append(out, raw[members[prev].End:members[prev+1].Start]...)
		}
		out = append(out, raw[m.Start:m.End]...)
		prev = i
	}
	out = append(out, raw[members[len(members)-1].End:]...)
	return out
}

// normalize is NormalizeSchema, with the schema's top-level members when
// it is kept (nil when it became the default).
func normalize(raw json.RawMessage) (json.RawMessage, []jsonscan.Member) {
	members, ok := jsonscan.ObjectMembers(raw)
	if !ok {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	for _, m := range members {
		if m.Key != "type" {
			continue
		}
		if v := raw[m.ValStart:m.End]; v[0] == '"' {
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return json.RawMessage(`{"type":"object"}`), nil
			}
		}
	}
	return raw, members
}
