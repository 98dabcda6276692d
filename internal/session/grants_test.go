package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// An "Always in this chat" is listed, outlives /new, and once revoked the
// next call asks again.
func TestRevokeGrant(t *testing.T) {
	dir := t.TempDir()
	a := &approvals{decide: func(ApprovalRequest) (Approval, error) { return ApprovedAlways, nil }}
	e := newEnv(t, callThenReport("sleep", `{"ms":1}`), envOptions{dataDir: dir, approve: a.approve,
		server: func(c *mcpconfig.ServerConfig) { c.Approval = mcpconfig.ApprovalWrites }})
	deliver := func(text string) {
		t.Helper()
		if err := e.manager.Deliver(chat.In(7), Message{Text: text, From: 4242}); err != nil {
			t.Fatal(err)
		}
	}
	deliver("first")
	e.chat.waitTexts(t, chat.In(7), 1)
	got, err := e.manager.Grants(chat.In(7))
	if err != nil || len(got) != 1 || got[0].Server != "fake" || got[0].Tool != "sleep" || got[0].By != 4242 || got[0].At.IsZero() {
		t.Fatalf("Grants = %+v, %v; want fake's sleep, by 4242", got, err)
	}
	if other, err := e.manager.Grants(chat.In(8)); err != nil || len(other) != 0 {
		t.Errorf("another chat's grants: %+v, %v", other, err)
	}

	// /new keeps it.
	if err := e.manager.Reset(context.Background(), chat.In(7)); err != nil {
		t.Fatal(err)
	}
	deliver("after /new")
	e.chat.waitTexts(t, chat.In(7), 2)
	if n := len(a.all()); n != 1 {
		t.Fatalf("asked %d times, want once: /new keeps the grant", n)
	}

	if ok, err := e.manager.RevokeGrant(chat.In(7), "fake", "sleep"); !ok || err != nil {
		t.Fatalf("RevokeGrant = %v, %v", ok, err)
	}
	if ok, err := e.manager.RevokeGrant(chat.In(7), "fake", "sleep"); ok || err != nil {
		t.Errorf("a second RevokeGrant = %v, %v; want false, nil", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "approvals", "7.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file after the last grant went: %v", err)
	}
	// The session that checked it before asks again at once.
	a.decide = func(ApprovalRequest) (Approval, error) { return Approved, nil }
	deliver("after the revocation")
	e.chat.waitTexts(t, chat.In(7), 3)
	if n := len(a.all()); n != 2 {
		t.Errorf("asked %d times, want a second time after the revocation", n)
	}
	if got, _ := e.manager.Grants(chat.In(7)); len(got) != 0 {
		t.Errorf("Approve (not always) added a grant: %+v", got)
	}
}

func TestRevokeGrants(t *testing.T) {
	m := newEnv(t, nil, envOptions{}).manager
	path := m.grantsPath(chat.In(-100))
	for _, tool := range []string{"a", "b", "c"} {
		if err := m.grants.add(path, "srv", tool, 1, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.grants.add(path, "srv", "b", 2, time.Now()); err != nil { // twice: kept once, as first given
		t.Fatal(err)
	}
	got, err := m.Grants(chat.In(-100))
	if err != nil || len(got) != 3 || got[1].Tool != "b" || got[1].By != 1 {
		t.Fatalf("Grants = %+v, %v", got, err)
	}
	if n, err := m.RevokeGrants(chat.In(-100)); n != 3 || err != nil {
		t.Fatalf("RevokeGrants = %d, %v; want 3", n, err)
	}
	if n, err := m.RevokeGrants(chat.In(-100)); n != 0 || err != nil {
		t.Errorf("RevokeGrants of none = %d, %v", n, err)
	}
}

// A file that cannot be read grants nothing, is reported as a
// *GrantsError, and is not overwritten: the operator may mend it.
func TestUnreadableGrants(t *testing.T) {
	m := newEnv(t, nil, envOptions{}).manager
	path := m.grantsPath(chat.In(7))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	const torn = `{"always": [{"server": "fake", "tool": "sleep"`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	var ge *GrantsError
	if _, err := m.Grants(chat.In(7)); !errors.As(err, &ge) {
		t.Errorf("Grants: %v, want a *GrantsError", err)
	}
	if _, err := m.RevokeGrant(chat.In(7), "fake", "sleep"); !errors.As(err, &ge) {
		t.Errorf("RevokeGrant: %v, want a *GrantsError", err)
	}
	if m.grants.has(path, "fake", "sleep", m.logger) {
		t.Error("an unreadable file granted a call")
	}
	if err := m.grants.add(path, "fake", "echo", 1, time.Now()); err == nil {
		t.Error("add over an unreadable file succeeded")
	}
	if data, _ := os.ReadFile(path); string(data) != torn {
		t.Errorf("the file was changed: %q", data)
	}
}

// Grants given and revoked at once — a turn's tool calls, /approvals —
// are all kept or all gone: no change is lost.
func TestGrantsConcurrently(t *testing.T) {
	var g grants
	path := filepath.Join(t.TempDir(), "approvals", "7.json")
	const n = 24
	for i := range n / 2 {
		if err := g.add(path, "srv", fmt.Sprintf("old%02d", i), 1, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := g.add(path, "srv", fmt.Sprintf("new%02d", i), 1, time.Now()); err != nil {
				t.Error(err)
			}
		})
		if i < n/2 {
			wg.Go(func() {
				tool := fmt.Sprintf("old%02d", i)
				if k, err := g.revoke(path, func(x Grant) bool { return x.Tool == tool }); k != 1 || err != nil {
					t.Errorf("revoke %s = %d, %v", tool, k, err)
				}
			})
		}
	}
	wg.Wait()
	list, err := readGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, x := range list {
		tools = append(tools, x.Tool)
	}
	slices.Sort(tools)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("new%02d", i))
	}
	if !slices.Equal(tools, want) {
		t.Errorf("grants %q, want %q", tools, want)
	}
}

func TestDurationText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{5 * time.Minute, "5 minutes"},
		{90 * time.Second, "90 seconds"},
		{time.Minute, "1 minute"},
		{time.Second, "1 second"},
		{7 * time.Second, "7 seconds"},
		{time.Hour, "1 hour"},
		{2 * time.Hour, "2 hours"},
		{90 * time.Minute, "90 minutes"},
		{1500 * time.Millisecond, "2 seconds"},
		{300 * time.Millisecond, "less than a second"},
		{0, "0 seconds"},
	}
	for _, tt := range tests {
		if got := DurationText(tt.d); got != tt.want {
			t.Errorf("DurationText(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
