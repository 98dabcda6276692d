package bot

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// fakeUsage records the lifts and reports what it was asked.
type fakeUsage struct {
	mu     sync.Mutex
	lifted []string
}

func (u *fakeUsage) Report(chatID, userID int64, admin bool) string {
	if admin {
		return fmt.Sprintf("usage of %d for admin %d", chatID, userID)
	}
	return fmt.Sprintf("usage of %d for %d", chatID, userID)
}

func (u *fakeUsage) AllowMore(chatID, by int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lifted = append(u.lifted, fmt.Sprintf("%d by %d", chatID, by))
}

func TestUsageCommands(t *testing.T) {
	tests := []struct {
		name   string
		chat   int64
		user   int64
		text   string
		reply  string
		lifted []string
	}{
		{"usage", alice, alice, "/usage", "usage of 1001 for 1001", nil},
		{"usage in a group", group, bob, "/usage", fmt.Sprintf("usage of %d for 1002", group), nil},
		{"an admin's usage", alice, admin, "/usage", "usage of 1001 for admin 1003", nil},
		{"an admin lifts another chat", alice, admin, "/allow_more 1002",
			"The daily allowance of chat 1002 is lifted for the rest of today (UTC).", []string{"1002 by 1003"}},
		{"typed with a hyphen, a group's id", alice, admin, fmt.Sprintf("/allow-more %d", group),
			fmt.Sprintf("The daily allowance of chat %d is lifted for the rest of today (UTC).", group), []string{fmt.Sprintf("%d by 1003", group)}},
		{"this chat", group, admin, "/allow_more", "The daily allowance of this chat is lifted for the rest of today (UTC).",
			[]string{fmt.Sprintf("%d by 1003", group)}},
		{"not an admin", alice, alice, "/allow_more 1001", "Only an admin of this bot (TELEGRAM_ADMINS) can lift the daily allowance.", nil},
		{"a bad chat id", alice, admin, "/allow_more everyone", allowMoreHelp, nil},
		{"too many", alice, admin, "/allow_more 1 2", allowMoreHelp, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &fakeUsage{}
			h := startBot(t, func(o *testOptions) { o.Admins = []int64{admin}; o.Usage = u })
			h.fake.Message(tt.chat, tt.user, tt.text)
			if got := h.texts(t, tt.chat, 1)[0]; got != tt.reply {
				t.Errorf("reply %q, want %q", got, tt.reply)
			}
			u.mu.Lock()
			defer u.mu.Unlock()
			if !slices.Equal(u.lifted, tt.lifted) {
				t.Errorf("lifted %q, want %q", u.lifted, tt.lifted)
			}
		})
	}
}
