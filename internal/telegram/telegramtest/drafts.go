package telegramtest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Draft is one sendMessageDraft call the fake took: a partial message
// shown to the user while it is written (Bot API 9.3).
type Draft struct {
	ChatID    int64
	DraftID   int64
	Text      string
	ParseMode string
	Time      time.Time
}

// sendMessageDraft takes a draft in a private chat, checked as a message
// text is.
func (f *Fake) sendMessageDraft(p map[string]string) (any, error) {
	if f.noDrafts {
		return nil, &apiError{status: http.StatusNotFound, description: "Not Found: method not found"}
	}
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	if chat < 0 {
		return nil, badRequest("TEXTDRAFT_PEER_INVALID")
	}
	if _, err := f.threadOf(chat, p); err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(strings.Trim(p["draft_id"], `"`), 10, 64)
	if err != nil || id == 0 {
		return nil, badRequest("invalid draft_id")
	}
	text := p["text"]
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("text is empty")
	}
	if err := checkText(text, p["parse_mode"], tgformat.MaxMessageUTF16, "message"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.drafts = append(f.drafts, Draft{ChatID: chat, DraftID: id, Text: text, ParseMode: p["parse_mode"], Time: time.Now()})
	f.notifyLocked()
	f.mu.Unlock()
	return true, nil
}

// Drafts returns the drafts the bot showed in chat, in order.
func (f *Fake) Drafts(chatID int64) []Draft {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Draft
	for _, d := range f.drafts {
		if d.ChatID == chatID {
			out = append(out, d)
		}
	}
	return out
}
