package disk

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// The cost of a measure of a chat's generated files: a browser folder of
// n snapshots and two console logs, results/ of 100 files. Cached is the
// watcher's case (nothing added since the last measure: one stat per
// folder and per log); cold lists and stats everything, as without the
// cache (and at every relistEvery).
//
//	go test -run '^$' -bench Measure -benchmem ./internal/disk/
func BenchmarkMeasure(b *testing.B) {
	for _, n := range []int{100, 1000, DefaultMaxFiles} {
		ws := b.TempDir()
		old := time.Now().Add(-time.Hour)
		for i := range n {
			write(b, ws, fmt.Sprintf("out/page-%05d.yml", i), 2048, old)
		}
		for i := range 100 {
			write(b, ws, fmt.Sprintf("results/r-%03d.txt", i), 4096, old)
		}
		write(b, ws, "out/console-1.log", 100, old)
		write(b, ws, "out/console-2.log", 100, old)
		tr := New(Options{Budget: 1 << 40, MaxFiles: 1 << 20, Sources: []Source{
			{Kind: "out", Dir: filepath.Join(ws, "out"), Deep: true, Log: isLog},
			{Kind: "results", Dir: filepath.Join(ws, "results")},
		}})
		b.Run(fmt.Sprintf("files=%d/cached", n+102), func(b *testing.B) {
			tr.Measure()
			for b.Loop() {
				tr.Growth()
			}
		})
		b.Run(fmt.Sprintf("files=%d/cold", n+102), func(b *testing.B) {
			for b.Loop() {
				tr.Forget()
				tr.Growth()
			}
		})
	}
}
