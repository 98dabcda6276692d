package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// diskSessions are fakeSessions that report a chat's disk (DiskUsage).
type diskSessions struct {
	*fakeSessions
	err error
}

func (d diskSessions) DiskUsage(_ context.Context, chatID chat.Place) (string, error) {
	if d.err != nil {
		return "", d.err
	}
	return fmt.Sprintf("Disk of %v", chatID), nil
}

// /usage adds the chat's disk after the model's usage when the sessions
// can tell it; a failure to tell leaves it out (logged).
func TestUsageShowsTheChatsDisk(t *testing.T) {
	tests := []struct {
		name  string
		usage Usage
		err   error
		reply string
	}{
		{"with the model's usage", &fakeUsage{}, nil, "usage of 1001 for 1001\n\nDisk of 1001"},
		{"usage not recorded", nil, nil, "Usage is not recorded.\n\nDisk of 1001"},
		{"the disk cannot be told", &fakeUsage{}, errors.New("boom"), "usage of 1001 for 1001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newBot(t, func(o *testOptions) {
				if tt.usage != nil {
					o.Usage = tt.usage
				}
				o.Sessions = diskSessions{fakeSessions: o.Sessions.(*fakeSessions), err: tt.err}
			})
			h.startPolling(t)
			h.fake.Message(alice, alice, "/usage")
			if got := h.texts(t, alice, 1)[0]; got != tt.reply {
				t.Errorf("reply %q, want %q", got, tt.reply)
			}
			if tt.err != nil && !strings.Contains(h.logs.String(), "boom") {
				t.Errorf("the failure is not logged:\n%s", h.logs)
			}
		})
	}
}

var _ DiskUsage = (*session.Manager)(nil)
