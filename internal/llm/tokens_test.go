package llm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

func TestTokenizerCounts(t *testing.T) {
	var tk llm.Tokenizer
	tests := []struct {
		s        string
		min, max int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"Hello, how are you today?", 6, 8},
		{strings.Repeat("word ", 1000), 1000, 1001},
		{"\xff\xfe invalid", 2, 6},
	}
	for _, tt := range tests {
		if n := tk.Count(tt.s); n < tt.min || n > tt.max {
			t.Errorf("Count(%.30q) = %d, want %d..%d", tt.s, n, tt.min, tt.max)
		}
	}
}

func BenchmarkTokenizerGoSpec(b *testing.B) {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip(err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "doc", "go_spec.html"))
	if err != nil {
		b.Skip(err)
	}
	var tk llm.Tokenizer
	tk.Count("warm")
	s := string(data)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		tk.Count(s)
	}
}
