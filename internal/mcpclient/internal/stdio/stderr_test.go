package stdio

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A JSON log line is logged at its own level; anything else at the
// server's stderr level.
func TestLineLevel(t *testing.T) {
	def := slog.LevelDebug
	tests := []struct {
		line string
		want slog.Level
	}{
		{`Secure MCP Filesystem Server running on stdio`, def},
		{`{"level":"info","msg":"listening"}`, slog.LevelInfo},
		{`{"level":"WARN","msg":"deprecated"}`, slog.LevelWarn},
		{`{"level":"error","msg":"boom"}`, slog.LevelError},
		{`{"level":"fatal"}`, slog.LevelError},
		{`{"level":"debug"}`, slog.LevelDebug},
		{`{"level":30,"msg":"pino info"}`, slog.LevelInfo},
		{`{"level":40}`, slog.LevelWarn},
		{`{"level":50}`, slog.LevelError},
		{`{"level":60}`, slog.LevelError},
		{`{"level":20}`, slog.LevelDebug},
		{`{"severity":"WARNING","message":"gcp"}`, slog.LevelWarn},
		{`{"level":"chatty"}`, def},
		{`{"msg":"no level"}`, def},
		{`{not json}`, def},
		{`{"level":"error"`, def},
	}
	for _, tt := range tests {
		if got := lineLevel(tt.line, def); got != tt.want {
			t.Errorf("lineLevel(%s) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 3*MaxLineBytes)
	in := "short\n" + long + "\n\nafter\r\n" + "é" + strings.Repeat("é", MaxLineBytes) + "\nlast without newline"
	r := newLineReader(strings.NewReader(in), MaxLineBytes)
	type line struct {
		text string
		cut  bool
	}
	var got []line
	for {
		l, cut, err := r.next()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		got = append(got, line{l, cut})
	}
	if len(got) != 6 {
		t.Fatalf("%d lines: %v", len(got), got)
	}
	if got[0] != (line{"short", false}) || got[1].text != long[:MaxLineBytes] || !got[1].cut ||
		got[2] != (line{"", false}) || got[3] != (line{"after\r", false}) || got[5] != (line{"last without newline", false}) {
		t.Errorf("lines: %v", got)
	}
	if l := got[4]; !l.cut || len(l.text) > MaxLineBytes || !strings.HasPrefix(l.text, "éé") || strings.ContainsRune(l.text, '\uFFFD') {
		t.Errorf("a cut line of two-byte characters must end on a character: %d bytes, cut %v", len(l.text), l.cut)
	}
}

// A server writing a stderr line of 2 MB (over bufio.Scanner's old 1 MB
// limit, which stopped the capture: the pipe filled and the server died of
// SIGPIPE) keeps running; the line is cut, and the lines after it are kept
// and logged at their levels.
func TestLongStderrLineKeepsCapture(t *testing.T) {
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	script := `head -c 2000000 /dev/zero | tr '\0' x >&2; echo >&2; echo '{"level":"error","msg":"after the long line"}' >&2; echo plain >&2; exit 7`
	p, err := Start(Command{Path: "/bin/sh", Args: []string{"-c", script}, Dir: t.TempDir(), Env: os.Environ()},
		Options{Name: "chatty", Logger: logger, StderrLevel: slog.LevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Terminate()
	<-p.Exited()
	p.Terminate() // waits for the stderr reader
	if got := p.ExitDescription(); got != "7" {
		t.Errorf("exit %s, want 7 (not a SIGPIPE)", got)
	}
	tail := p.Tail()
	if len(tail) != 3 || len(tail[0]) > MaxLineBytes+8 || !strings.HasSuffix(tail[0], "[…]") ||
		!strings.Contains(tail[1], "after the long line") || tail[2] != "plain" {
		t.Errorf("tail: %d lines, %.80q", len(tail), tail)
	}
	log := logs.String()
	if !strings.Contains(log, `level=ERROR msg="chatty mcp: {\"level\":\"error\"`) || !strings.Contains(log, `level=DEBUG msg="chatty mcp: plain"`) {
		t.Errorf("log:\n%.2000s", log)
	}
}

// A flood of stderr is logged at a bounded rate, with a count of what was
// left out; the tail keeps the newest lines either way.
func TestStderrFloodIsRateLimited(t *testing.T) {
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	script := `for i in $(seq 5000); do echo "flood line $i" >&2; done; exit 0`
	p, err := Start(Command{Path: "/bin/sh", Args: []string{"-c", script}, Dir: t.TempDir(), Env: os.Environ()},
		Options{Name: "flood", Logger: logger, StderrLevel: slog.LevelWarn})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	p.Terminate()
	log := logs.String()
	logged := strings.Count(log, "flood mcp: flood line")
	if logged < logBurst || logged > logBurst+200 {
		t.Errorf("%d of 5000 lines logged, want about the burst of %d", logged, logBurst)
	}
	if !strings.Contains(log, "stderr lines not logged (over 20 lines a second)") {
		t.Errorf("no count of the lines left out:\n…%s", log[max(0, len(log)-500):])
	}
	if tail := p.Tail(); len(tail) == 0 || tail[len(tail)-1] != "flood line 5000" {
		t.Errorf("tail ends with %q", tail[len(tail)-1:])
	}
}
