package bot

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/volcanicbot/volcanicbot/internal/chat"
)

func TestTextIsDelivered(t *testing.T) {
	h := startBot(t, nil)
	h.fake.Message(alice, alice, "hello")
	h.fake.Message(alice, alice, "world")
	got := h.sess.waitCalls(t, "deliver", 2)
	if want := []string{"deliver 1001 hello", "deliver 1001 world"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
}

func TestGroupRules(t *testing.T) {
	h := startBot(t, nil)
	name := h.fake.Me().Username
	h.fake.Message(group, alice, "just chatting")
	h.fake.Message(group, alice, "@"+name+" first question")
	h.fake.Message(group, bob, "/roll") // another bot's command
	h.fake.Message(group, bob, "/help@other_bot")
	h.fake.Message(group, bob, "/mcp@"+name)
	h.texts(t, group, 1) // the /mcp answer
	answer := h.fake.Sent(group)[0].ID
	h.fake.Reply(group, alice, "a reply to the bot", answer)
	h.fake.Reply(group, alice, "a reply to bob", answer+1000)
	h.fake.Message(group, alice, "/stop")
	h.sess.waitCalls(t, "stop", 1)
	want := []string{
		"deliver -1001234567890 first question",
		"mcp -1001234567890",
		"deliver -1001234567890 [Replying to your earlier message: \"MCP servers:\n• fetch: disabled\"]\na reply to the bot",
		"stop -1001234567890",
	}
	if got := h.sess.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls\n%q\nwant\n%q", got, want)
	}
}

// A stranger's group message whose lower-case form is longer than itself
// ("Ⱥ") once crashed the handler and got the error reply instead of the
// refusal; a mention after "İ" was missed.
func TestGroupMentionAfterNonASCII(t *testing.T) {
	h := startBot(t, nil)
	at := "@" + h.fake.Me().Username
	h.fake.Message(group, stranger, "Ⱥ "+at)
	h.fake.Message(group, alice, "İstanbul "+at+" weather?")
	got := h.sess.waitCalls(t, "deliver", 1)
	if want := fmt.Sprintf("deliver %d İstanbul weather?", group); got[0] != want {
		t.Errorf("delivered %q, want %q", got[0], want)
	}
	if texts := h.fake.Texts(group); len(texts) != 1 || texts[0] != refusalText(stranger) {
		t.Errorf("group got %q, want the refusal", texts)
	}
	if strings.Contains(h.logs.String(), "panic") {
		t.Errorf("a panic was logged:\n%s", h.logs)
	}
}

// A chat whose command is slow does not delay another chat, and its own
// later messages wait for it, in order.
func TestPerChatOrder(t *testing.T) {
	release := make(chan struct{})
	h := startBot(t, nil)
	h.sess.mcpStatus = func(ctx context.Context, chatID chat.Place) (chat.MCPStatus, error) {
		if chatID == chat.In(alice) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return chat.MCPStatus{Servers: []chat.ServerStatus{{Display: "servers"}}}, nil
	}
	h.fake.Message(alice, alice, "/mcp")
	h.sess.waitCalls(t, "mcp 1001", 1)
	h.fake.Message(alice, alice, "a1")
	h.fake.Message(alice, alice, "a2")
	for i := range 3 {
		h.fake.Message(bob, bob, "b"+string(rune('1'+i)))
	}
	h.sess.waitCalls(t, "deliver 1002", 3)
	if got := h.sess.callsWith("deliver 1001"); len(got) != 0 {
		t.Fatalf("alice's messages overtook her /mcp: %q", got)
	}
	close(release)
	got := h.sess.waitCalls(t, "deliver 1001", 2)
	if want := []string{"deliver 1001 a1", "deliver 1001 a2"}; !slices.Equal(got, want) {
		t.Errorf("alice: %q, want %q", got, want)
	}
	if want := []string{"deliver 1002 b1", "deliver 1002 b2", "deliver 1002 b3"}; !slices.Equal(h.sess.callsWith("deliver 1002"), want) {
		t.Errorf("bob: %q, want %q", h.sess.callsWith("deliver 1002"), want)
	}
	if got := h.texts(t, alice, 1); got[0] != "MCP servers:\n• servers: disabled" {
		t.Errorf("alice got %q", got)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	h := startBot(t, nil)
	h.sess.onCall = func(_ context.Context, call string) {
		if strings.HasSuffix(call, " boom") {
			panic("boom in a handler")
		}
	}
	h.fake.Message(alice, alice, "boom")
	h.fake.Message(alice, alice, "after")
	h.sess.waitCalls(t, "deliver 1001 after", 1)
	if got := h.texts(t, alice, 1); got[0] != panicReply {
		t.Errorf("sent %q, want the error reply", got)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "panic while handling an update") || !strings.Contains(logs, "boom in a handler") {
		t.Errorf("panic not logged:\n%s", logs)
	}

	// The poller's handler recovers too.
	h.bot.recovered(&models.Update{Message: &models.Message{Chat: models.Chat{ID: bob}}}, func() { panic("in the poller") })
	if got := h.texts(t, bob, 1); got[0] != panicReply {
		t.Errorf("bob got %q", got)
	}
}

func TestMediaAndBareMention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		m := h.fake.NewMessage(alice, alice, "")
		m.Sticker = &models.Sticker{FileID: "x", Width: 1, Height: 1}
		h.fake.Send(updateOf(m))
		h.fake.Message(group, alice, "@"+h.fake.Me().Username)
		synctest.Wait() // both are handled
		if got := h.fake.Texts(alice); len(got) != 1 || got[0] != mediaReply {
			t.Errorf("alice got %q", got)
		}
		if got := h.fake.Texts(group); len(got) != 1 || got[0] != emptyReply {
			t.Errorf("group got %q", got)
		}
		if calls := h.sess.Calls(); len(calls) != 0 {
			t.Errorf("calls %q", calls)
		}
	})
}

// Photos and documents are downloaded and reach the session with their
// caption; a file over the Bot API's limit, or one that cannot be
// downloaded, gets a reply instead.
func TestFilesReachTheSession(t *testing.T) {
	h := startBot(t, nil)
	jpeg := bytes.Repeat([]byte{0xff, 0xd8, 0xff, 0xe0}, 300)
	pdf := []byte("%PDF-1.4 a tiny document")

	h.fake.Photo(alice, alice, jpeg, "what is this?")
	h.sess.waitCalls(t, "deliver", 1)
	h.fake.Document(alice, alice, "report.pdf", "application/pdf", pdf, 0, "")
	h.sess.waitCalls(t, "deliver", 2)
	h.fake.Document(alice, alice, "notes", "", []byte("plain words\n"), 0, "read it")
	got := h.sess.waitCalls(t, "deliver", 3)
	want := []string{
		`deliver 1001 what is this? +file "" image/jpeg 1200`,
		`deliver 1001  +file "report.pdf" application/pdf 24`,
		`deliver 1001 read it +file "notes" text/plain; charset=utf-8 12`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("delivered\n%q\nwant\n%q", got, want)
	}
	h.sess.mu.Lock()
	photo := h.sess.files[0].Data
	h.sess.mu.Unlock()
	if !bytes.Equal(photo, jpeg) {
		t.Error("the photo's bytes changed on the way")
	}
	// The largest size was downloaded, once.
	if n := len(h.fake.RequestsFor("file")); n != 3 {
		t.Errorf("%d downloads, want 3", n)
	}

	h.fake.Document(bob, bob, "huge.iso", "application/octet-stream", []byte("x"), 25<<20, "")
	if texts := h.texts(t, bob, 1); texts[0] != tooBigReply {
		t.Errorf("a 25 MB file got %q", texts[0])
	}
	h.fake.FailNext("getFile", http.StatusBadRequest, "Bad Request: invalid file_id", 0)
	h.fake.Photo(bob, bob, jpeg, "")
	if texts := h.texts(t, bob, 2); texts[1] != fileReply {
		t.Errorf("a failed download got %q", texts[1])
	}
	if n := len(h.sess.callsWith("deliver 1002")); n != 0 {
		t.Errorf("%d deliveries for bob", n)
	}
	if strings.Contains(h.logs.String(), h.fake.Token()) {
		t.Error("the token (in the file URL) reached the log")
	}
}

// Photos sent as an album arrive one by one and reach the session as one
// message with every photo and the caption, DefaultAlbumWait after the
// last part (on the bubble's clock); anything else sent in the chat
// completes the album first.
func TestAlbumIsOneMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		photos := [][]byte{[]byte("\xff\xd8\xff one"), []byte("\xff\xd8\xff two"), []byte("\xff\xd8\xff three")}
		sent := time.Now()
		h.fake.Album(alice, alice, photos, "compare these")
		time.Sleep(DefaultAlbumWait - time.Millisecond)
		if calls := h.sess.Calls(); len(calls) != 0 {
			t.Fatalf("delivered before the album's wait ended: %q", calls)
		}
		got := h.sess.waitCalls(t, "deliver", 1)
		if waited := time.Since(sent); waited != DefaultAlbumWait {
			t.Errorf("album delivered after %v, want %v", waited, DefaultAlbumWait)
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], "deliver 1001 compare these +file") || strings.Count(got[0], "+file") != 3 {
			t.Fatalf("delivered %q", got)
		}
		time.Sleep(10 * DefaultAlbumWait)
		synctest.Wait()
		if n := len(h.sess.callsWith("deliver")); n != 1 {
			t.Errorf("%d deliveries for one album", n)
		}

		// An album followed at once by a text: the album goes first, whole.
		h.fake.Album(alice, alice, photos[:2], "")
		h.fake.Message(alice, alice, "and this one?")
		got = h.sess.waitCalls(t, "deliver", 3)
		if strings.Count(got[1], "+file") != 2 || got[2] != "deliver 1001 and this one?" {
			t.Errorf("delivered %q", got[1:])
		}

		// In a group only the first part mentions the bot; the others belong
		// to the album all the same.
		h.fake.Album(group, alice, photos, "@"+h.fake.Me().Username+" which is best?")
		got = h.sess.waitCalls(t, fmt.Sprintf("deliver %d", group), 1)
		if !strings.HasPrefix(got[0], fmt.Sprintf("deliver %d which is best? +file", group)) || strings.Count(got[0], "+file") != 3 {
			t.Errorf("group album delivered as %q", got)
		}
	})
}
