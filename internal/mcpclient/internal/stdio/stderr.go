package stdio

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// TailLines is how many stderr lines a process keeps for error messages
// and /mcp <name>.
const TailLines = 20

// MaxLineBytes caps one stderr line kept or logged: the rest of a longer
// line is dropped (a server that writes megabytes without a newline must
// neither stop stderr capture nor fill the memory).
const MaxLineBytes = 8 << 10

// lineReader reads lines of at most max bytes, dropping the rest of longer
// ones.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 4096), max: max}
}

// next returns the next line without its newline, and whether it was cut
// (on a UTF-8 boundary). At EOF a last line without a newline is returned
// before the error.
func (l *lineReader) next() (line string, cut bool, err error) {
	var buf []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if room := l.max - len(buf); len(chunk) > room {
			buf = append(buf, chunk[:room]...)
			cut = true
		} else {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil, len(buf) > 0:
			if cut {
				for i := 0; i < utf8.UTFMax-1 && len(buf) > 0 && !utf8.Valid(buf); i++ {
					buf = buf[:len(buf)-1]
				}
			}
			return string(buf), cut, nil // at EOF, the error comes with the next call
		default:
			return "", false, err
		}
	}
}

// A server's stderr is logged at most logRate lines a second on average,
// in bursts of up to logBurst: a flood (100 MB of stderr made 102,400 WARN
// lines) costs a count of what was left out, not the log.
const (
	logRate  = 20
	logBurst = 200
)

// logLimiter is a token bucket of stderr lines to log.
type logLimiter struct {
	tokens  float64
	last    time.Time
	dropped int
}

func newLogLimiter() *logLimiter { return &logLimiter{tokens: logBurst} }

// allow reports whether a line may be logged now, counting it otherwise.
func (l *logLimiter) allow(now time.Time) bool {
	if !l.last.IsZero() {
		l.tokens = min(logBurst, l.tokens+now.Sub(l.last).Seconds()*logRate)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return true
	}
	l.dropped++
	return false
}

// takeDropped returns how many lines were left out since it was last
// asked.
func (l *logLimiter) takeDropped() int {
	n := l.dropped
	l.dropped = 0
	return n
}

// lineLevel is the level a stderr line is logged at: the level of a JSON
// log line (a "level" or "severity" member: a name, or pino's and bunyan's
// numbers), otherwise def.
func lineLevel(line string, def slog.Level) slog.Level {
	if !strings.HasPrefix(line, "{") || !strings.HasSuffix(line, "}") {
		return def
	}
	var m struct {
		Level    json.RawMessage `json:"level"`
		Severity json.RawMessage `json:"severity"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return def
	}
	raw := m.Level
	if len(raw) == 0 {
		raw = m.Severity
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "trace", "debug", "verbose", "silly":
			return slog.LevelDebug
		case "info", "information", "notice", "http":
			return slog.LevelInfo
		case "warn", "warning":
			return slog.LevelWarn
		case "error", "err", "fatal", "critical", "crit", "alert", "emergency", "panic":
			return slog.LevelError
		}
		return def
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil { // pino and bunyan: 10 trace … 60 fatal
		switch {
		case n >= 50:
			return slog.LevelError
		case n >= 40:
			return slog.LevelWarn
		case n >= 30:
			return slog.LevelInfo
		case n > 0:
			return slog.LevelDebug
		}
	}
	return def
}

// TailBytes caps the stderr tail kept in all: the last lines that fit.
const TailBytes = 16 << 10

// lineTail keeps the last n lines, at most TailBytes of them.
type lineTail struct {
	mu    sync.Mutex
	lines []string
	n     int
	size  int
}

func newLineTail(n int) *lineTail { return &lineTail{n: n} }

func (t *lineTail) add(line string) {
	t.mu.Lock()
	t.lines = append(t.lines, line)
	t.size += len(line)
	for len(t.lines) > t.n || (t.size > TailBytes && len(t.lines) > 1) {
		t.size -= len(t.lines[0])
		t.lines[0] = ""
		t.lines = t.lines[1:]
	}
	t.mu.Unlock()
}

func (t *lineTail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}
