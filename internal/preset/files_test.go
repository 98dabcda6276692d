package preset

import "testing"

func TestCutLineAnchor(t *testing.T) {
	for _, tt := range []struct {
		path, file string
		line       int
		ok         bool
	}{
		{"browser/console-1.log#L12", "browser/console-1.log", 12, true},
		{".playwright-mcp/console-2026-03-01T12-00-00-000Z.log#L1", ".playwright-mcp/console-2026-03-01T12-00-00-000Z.log", 1, true},
		{"browser/console-1.log", "browser/console-1.log", 0, false},
		{"notes.md#Lx", "notes.md#Lx", 0, false},
		{"a#L2/b.txt", "a#L2/b.txt", 0, false}, // only at the end
	} {
		file, line, ok := CutLineAnchor(tt.path)
		if file != tt.file || line != tt.line || ok != tt.ok {
			t.Errorf("CutLineAnchor(%q) = %q, %d, %v; want %q, %d, %v", tt.path, file, line, ok, tt.file, tt.line, tt.ok)
		}
	}
}
