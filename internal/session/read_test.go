package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// read refuses what send refuses (the same rules: no symlink, nothing
// outside the workspace or under .volcanic/, one name), and directories
// and binary files, each with a clear error; it pages through text.
func TestReadTool(t *testing.T) {
	e, _, ws, secret := sendEnv(t)
	var lines strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	write(t, filepath.Join(ws, "results", "big.txt"), lines.String())
	write(t, filepath.Join(ws, "browser", "console-1.log"), "[LOG] one @ :0\n[ERROR] two @ :0\n[LOG] three @ :0")
	write(t, filepath.Join(ws, "crlf.txt"), "a\r\nb\r\n")
	write(t, filepath.Join(ws, "empty.txt"), "")
	write(t, filepath.Join(ws, "long.txt"), "short\n"+strings.Repeat("é", readMaxLine)+"\nafter\n")
	write(t, filepath.Join(ws, "shot.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write(t, filepath.Join(ws, "latin1.txt"), "caf\xe9\n")
	transcript := filepath.Join(e.manager.Private(chat.In(70)), transcriptName)
	write(t, transcript, `{"role":"user"}`)
	write(t, filepath.Join(ws, "ok.txt"), "fine")
	for _, l := range []struct{ target, name string }{{secret, "passwd"}, {transcript, "transcript-copy.jsonl"}} {
		if err := os.Link(l.target, filepath.Join(ws, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(ws, "outside-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.txt", filepath.Join(ws, "inside-link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    readArgs
		wantErr string
		want    []string // in the result, in order
		not     []string
	}{
		{args: readArgs{Path: "results/big.txt"}, want: []string{"results/big.txt, lines 1–2000 of 2500:\nline 1\n", "line 2000\n[more from line 2001: read again with offset 2001]"}, not: []string{"line 2001\n"}},
		{args: readArgs{Path: "results/big.txt", Offset: 2001}, want: []string{"lines 2001–2500 of 2500:\nline 2001\n", "line 2500\n[end of file]"}},
		{args: readArgs{Path: "results/big.txt", Offset: 10, Limit: 3}, want: []string{"lines 10–12 of 2500:\nline 10\nline 11\nline 12\n[more from line 13: read again with offset 13]"}},
		{args: readArgs{Path: "results/big.txt", Offset: 3000}, want: []string{"results/big.txt has 2500 lines; there is nothing from line 3000 on."}},
		{args: readArgs{Path: "browser/console-1.log#L2"}, want: []string{"browser/console-1.log, lines 2–3 of 3:\n[ERROR] two @ :0\n[LOG] three @ :0\n[end of file]"}},
		{args: readArgs{Path: "crlf.txt"}, want: []string{"lines 1–2 of 2:\na\nb\n[end of file]"}},
		{args: readArgs{Path: "empty.txt"}, want: []string{"empty.txt is empty."}},
		{args: readArgs{Path: "long.txt"}, want: []string{"short\n", "\nafter\n", "[line 2 is longer than 8 KB: only its start is shown]"}},
		{args: readArgs{Path: "missing.txt"}, wantErr: `no file at "missing.txt"`},
		{args: readArgs{Path: "results"}, wantErr: `"results" is a folder`},
		{args: readArgs{Path: "shot.png"}, wantErr: "shot.png is a binary file (image/png"},
		{args: readArgs{Path: "latin1.txt"}, wantErr: "binary file"},
		{args: readArgs{Path: "../x.txt"}, wantErr: "leaves the workspace"},
		{args: readArgs{Path: "/etc/passwd"}, wantErr: "is absolute"},
		{args: readArgs{Path: ".volcanic/transcript.jsonl"}, wantErr: `no file at ".volcanic/transcript.jsonl"`},
		{args: readArgs{Path: "../../private/70/transcript.jsonl"}, wantErr: "leaves the workspace"},
		{args: readArgs{Path: "passwd"}, wantErr: "has other names"},
		{args: readArgs{Path: "transcript-copy.jsonl"}, wantErr: "has other names"},
		{args: readArgs{Path: "outside-link"}, wantErr: "symlink: read takes only real files"},
		{args: readArgs{Path: "inside-link"}, wantErr: "symlink"},
		{args: readArgs{Path: ""}, wantErr: "path is required"},
	}
	for _, open := range []struct {
		name string
		f    beneathFunc
	}{{"openat2", openBeneath}, {"walk", openWalk}} {
		for _, tt := range tests {
			got, err := readWorkspaceFile(open.f, ws, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s %+v: got %.300q, %v; want an error with %q", open.name, tt.args, got, err, tt.wantErr)
				}
				if strings.Contains(got, "SECRET") || (err != nil && strings.Contains(err.Error(), "SECRET")) {
					t.Errorf("%s %+v: the secret leaked", open.name, tt.args)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %+v: %v", open.name, tt.args, err)
				continue
			}
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("%s %+v: %.300q… lacks %q (in order)", open.name, tt.args, got, w)
					break
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("%s %+v: %q has %q", open.name, tt.args, got, n)
				}
			}
			if len(got) > readMaxBytes+1024 {
				t.Errorf("%s %+v: %d bytes, over the bound", open.name, tt.args, len(got))
			}
		}
	}
}

// One call returns at most readMaxBytes of lines, whatever limit asks.
func TestReadToolBytesBound(t *testing.T) {
	_, _, ws, _ := sendEnv(t)
	line := strings.Repeat("y", 1000) + "\n"
	write(t, filepath.Join(ws, "wide.txt"), strings.Repeat(line, 100))
	got, err := readWorkspaceFile(openBeneath, ws, readArgs{Path: "wide.txt", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "lines 1–32 of 100") || !strings.Contains(got, "read again with offset 33") {
		t.Errorf("got %q…", got[:80])
	}
}

func TestReadArguments(t *testing.T) {
	for raw, want := range map[string]readArgs{
		`{"path":"a.txt"}`:                           {Path: "a.txt"},
		`{"path":"a.txt","offset":5,"limit":"10"}`:   {Path: "a.txt", Offset: 5, Limit: 10},
		`{"path":"a.txt","offset":5.0,"limit":null}`: {Path: "a.txt", Offset: 5},
	} {
		got, problem := readArguments([]byte(raw))
		if problem != "" || got != want {
			t.Errorf("%s: %+v %q, want %+v", raw, got, problem, want)
		}
	}
	for raw, want := range map[string]string{
		`{}`:                          "path is required",
		`{"path":5}`:                  `"path" must be a string, not a number`,
		`{"path":"a","offset":"ten"}`: "offset must be a whole number",
		`{"path":"a","limit":1.5}`:    "limit must be a whole number",
		`[1]`:                         "an array, not a JSON object",
	} {
		if _, problem := readArguments([]byte(raw)); !strings.Contains(problem, want) {
			t.Errorf("%s: %q, want %q", raw, problem, want)
		}
	}
}
