package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// A tool call's arguments must be a JSON object. Models cut off at their
// token limit send half of one; some send an array or a bare string. Such
// a call is not made: the model gets an error result that says what was
// wrong and what to send, rather than the server's guess (a "required
// argument not found" for an object it never saw).

// callArguments returns the arguments object of a call to tool, or the
// error text for the model when raw is not one. Empty and null arguments
// are {}. A JSON string holding an object or an array that is not valid
// JSON is how the llm adapters keep text that is not JSON (see
// storableArguments); it is judged as that text.
func callArguments(tool string, raw json.RawMessage) (json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), ""
	}
	if err := jsonSyntax(raw); err != "" {
		return nil, invalidJSON(tool, err)
	}
	switch raw[0] {
	case '{':
		return raw, ""
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s) // valid: checked above
		if strings.HasPrefix(s, oversizedArguments) {
			return nil, fmt.Sprintf("invalid arguments for %s: %s — the call was not made; "+
				"send less at a time (write long content to a file in the workspace first)", tool, strings.Trim(s, "[]"))
		}
		if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') {
			if err := jsonSyntax([]byte(t)); err != "" {
				return nil, invalidJSON(tool, err)
			}
		}
	}
	return nil, fmt.Sprintf("invalid arguments for %s: %s, not a JSON object — the call was not made; "+
		"send the arguments as one JSON object of the tool's parameters", tool, jsonKind(raw[0]))
}

func invalidJSON(tool, why string) string {
	return fmt.Sprintf("invalid arguments for %s: not valid JSON (%s) — the call was not made; send the complete JSON object", tool, why)
}

// jsonSyntax describes why b is not valid JSON, or returns "".
func jsonSyntax(b []byte) string {
	if json.Valid(b) {
		return ""
	}
	err := json.Unmarshal(b, new(json.RawMessage))
	var syn *json.SyntaxError
	switch {
	case err == nil: // not reached: json.Valid said no
		return "malformed"
	case errors.As(err, &syn) && syn.Offset >= int64(len(b)) && strings.HasPrefix(syn.Error(), "unexpected end"):
		return "unexpected end of input"
	case errors.As(err, &syn):
		return fmt.Sprintf("%s, at byte %d", syn.Error(), syn.Offset)
	}
	return err.Error()
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// oversizedArguments starts the JSON string that stands in for arguments
// over maxArguments, in the transcript and for the runner, which refuses
// the call.
const oversizedArguments = "[arguments left out: "

// storableArguments returns raw as valid JSON of bounded size, so that the
// conversation can be stored and sent again: text that is not JSON becomes
// a JSON string holding it, as the llm adapters keep it, empty arguments
// are {}, and arguments over maxArguments a note of their size.
func storableArguments(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) > maxArguments:
		b, _ := json.Marshal(fmt.Sprintf("%s%s, over the %s a tool call may carry]", oversizedArguments,
			chat.ByteSize(len(t)), chat.ByteSize(maxArguments)))
		return b
	case len(t) == 0:
		return json.RawMessage("{}")
	case json.Valid(t):
		return raw
	}
	b, _ := json.Marshal(string(raw)) // a string never fails
	return b
}

// sendArguments decodes the send tool's arguments, or returns the error
// text for the model.
func sendArguments(raw json.RawMessage) (sendArgs, string) {
	obj, problem := callArguments(SendToolName, raw)
	if problem != "" {
		return sendArgs{}, problem
	}
	var args sendArgs
	if err := json.Unmarshal(obj, &args); err != nil {
		why := err.Error()
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			why = fmt.Sprintf("%q must be a string, not %s", typ.Field, jsonTypeName(typ.Value))
		}
		return sendArgs{}, fmt.Sprintf(`invalid arguments for %s: %s — the call was not made; send {"path": "<workspace-relative path>", "caption": "<optional text>"}`, SendToolName, why)
	}
	return args, ""
}

// jsonTypeName is UnmarshalTypeError.Value ("number", "bool", "array",
// "number 5"…) for people.
func jsonTypeName(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "number":
		return "a number"
	case "string":
		return "a string"
	}
	return v
}
