package jsonscan

import (
	"bytes"
	"encoding/json"
)

// Envelope is the top level of one incoming message, found by a scan that
// decodes nothing: the result stays raw for the mapper, which decodes it
// once.
type Envelope struct {
	ID     []byte // raw; nil when absent
	Method bool   // a method member is present: a request or a notification
	Result []byte // raw
	Error  []byte // raw
}

// ScanEnvelope reads the top-level members of a JSON-RPC message. ok is
// false when line is not a valid JSON object.
func ScanEnvelope(line []byte) (e Envelope, ok bool) {
	if !Valid(line) {
		return e, false
	}
	i := SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return e, false
	}
	i = SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return e, true
	}
	for i < len(line) {
		keyEnd := SkipString(line, i)
		key := line[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 { // an escaped key: unescape it
			var k string
			if json.Unmarshal(line[i:keyEnd], &k) != nil {
				return e, false
			}
			key = []byte(k)
		}
		i = SkipSpace(line, keyEnd) // at ':'
		val := SkipSpace(line, i+1) // the value
		end := SkipValue(line, val)
		switch string(key) {
		case "id":
			e.ID = line[val:end]
		case "method":
			e.Method = true
		case "result":
			e.Result = line[val:end]
		case "error":
			e.Error = line[val:end]
		}
		i = SkipSpace(line, end)
		if i >= len(line) || line[i] == '}' {
			return e, true
		}
		i = SkipSpace(line, i+1) // past ','
	}
	return e, true
}
