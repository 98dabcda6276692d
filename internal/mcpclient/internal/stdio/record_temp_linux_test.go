package stdio

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// A bot killed while it rewrote its record leaves the rewrite's temporary
// file (".<record>.tmp…") beside it; the next start removes those of dead
// bot processes with their records, and leaves a live one's alone.
func TestReapRecordsRemovesTheTempFilesOfDeadBots(t *testing.T) {
	dir := t.TempDir()
	dead, deadStart := deadSpawner(t)
	self := readSelf()
	deadTemp := "." + recordName(procKey{dead, deadStart}) + ".tmp1x2y3z"
	liveTemp := "." + recordName(self.procKey) + ".tmp4a5b"
	other := ".notes.tmp99" // not a record's: not ours to remove
	for _, name := range []string{deadTemp, liveTemp, other} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(recordMagic+"\nboot x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tr := &Tracker{logger: slog.New(slog.DiscardHandler), stateDir: dir}
	tr.reapRecords(self)
	for name, want := range map[string]bool{deadTemp: false, liveTemp: true, other: true} {
		_, err := os.Lstat(filepath.Join(dir, name))
		if got := err == nil; got != want {
			t.Errorf("%s is there: %v, want %v", name, got, want)
		}
	}
}
