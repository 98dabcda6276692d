package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ConfigError is one refused server entry or settings file. Msg is the
// complete sentence (it names the field); Field is the name of the
// offending field ("" when the entry or the file as a whole is wrong), for
// callers matching with errors.As.
type ConfigError struct {
	Origin string // "settings /root/.volcanic/agent/settings.json", "config /etc/volcanicbot.yaml", …
	Server string // "" when the error is not about one server
	Field  string
	Msg    string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Origin != "" {
		b.WriteString(e.Origin)
		b.WriteString(": ")
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// describeJSONError turns a decoding error into "invalid JSON at line L,
// column C: …" when it carries an offset into data.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "unexpected end") {
			line, col := lineColumn(data, len(data))
			return fmt.Sprintf("invalid JSON at line %d, column %d: unexpected end of file", line, col)
		}
		// Offset counts the bytes read, the offending one included.
		line, col := lineColumn(data, int(max(se.Offset-1, 0)))
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := lineColumn(data, len(data))
		return fmt.Sprintf("invalid JSON at line %d, column %d: unexpected end of file", line, col)
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// lineColumn returns the 1-based line and column (in bytes) of the byte at
// index i of data (i == len(data) is the end of the file).
func lineColumn(data []byte, i int) (line, col int) {
	i = min(max(i, 0), len(data))
	before := data[:i]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = i - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
