package mcpclient

import (
	"bytes"
	"encoding/json"
)

// NormalizeSchema returns a tool's inputSchema as the model should get it:
// the server's bytes verbatim (key order, whitespace and every keyword kept;
// nothing is re-marshalled), except that
//   - a missing, null, invalid or non-object schema, or an object whose
//     top-level "type" is a string other than "object" (MCP requires
//     "object" and providers refuse anything else), becomes {"type":"object"};
//   - every top-level "$schema" member is cut out (a nested one is kept).
//
// An object without "type" is left as it is.
func NormalizeSchema(raw json.RawMessage) json.RawMessage {
	members, ok := scanSchemaObject(raw)
	if !ok {
		return json.RawMessage(`{"type":"object"}`)
	}
	drop := 0
	for _, m := range members {
		switch m.key {
		case "$schema":
			drop++
		case "type":
			if v := raw[m.valStart:m.end]; v[0] == '"' {
				var t string
				if json.Unmarshal(v, &t) != nil || t != "object" {
					return json.RawMessage(`{"type":"object"}`)
				}
			}
		}
	}
	if drop == 0 {
		return raw
	}
	// Rebuild from the original bytes: the text before the first member,
	// the kept members with the separator that followed each, and the text
	// after the last member.
	out := make([]byte, 0, len(raw))
	out = append(out, raw[:members[0].start]...)
	prev := -1
	for i, m := range members {
		if m.key == "$schema" {
			continue
		}
		if prev >= 0 {
			out = append(out, raw[members[prev].end:members[prev+1].start]...)
		}
		out = append(out, raw[m.start:m.end]...)
		prev = i
	}
	out = append(out, raw[members[len(members)-1].end:]...)
	return out
}

// schemaMember is one top-level member of a JSON object: raw[start:end] is
// `"key" : value`, and raw[valStart:end] the value.
type schemaMember struct {
	key             string
	start, valStart int
	end             int
}

// scanSchemaObject lists the members of the JSON object in raw, in order.
// ok is false when raw is not a valid JSON object.
func scanSchemaObject(raw []byte) (members []schemaMember, ok bool) {
	if !validJSON(raw) {
		return nil, false
	}
	// raw is valid JSON from here on, so the scanner can trust its shape.
	i := skipJSONSpace(raw, 0)
	if raw[i] != '{' {
		return nil, false
	}
	i = skipJSONSpace(raw, i+1)
	if raw[i] == '}' {
		return nil, true
	}
	for {
		start := i
		keyEnd := skipJSONString(raw, i)
		key := raw[i+1 : keyEnd-1]
		var name string
		if bytes.IndexByte(key, '\\') < 0 {
			name = string(key)
		} else if json.Unmarshal(raw[i:keyEnd], &name) != nil {
			return nil, false
		}
		i = skipJSONSpace(raw, keyEnd) // at ':'
		valStart := skipJSONSpace(raw, i+1)
		end := skipJSONValue(raw, valStart)
		members = append(members, schemaMember{key: name, start: start, valStart: valStart, end: end})
		i = skipJSONSpace(raw, end)
		if raw[i] == '}' {
			return members, true
		}
		i = skipJSONSpace(raw, i+1) // past ','
	}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSONString returns the index just past the string that starts at
// b[i]: the first quote after it not escaped by an odd run of backslashes
// (found with bytes.IndexByte: results carry strings of tens of kilobytes).
func skipJSONString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		backslashes := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return len(b)
}

// skipJSONValue returns the index just past the value that starts at b[i].
func skipJSONValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipJSONString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipJSONString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}
