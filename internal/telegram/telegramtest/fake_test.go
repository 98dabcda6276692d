package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// client is a go-telegram/bot client of f, so the fake is tested against
// the requests the real library sends.
func client(t *testing.T, f *Fake) *tgbot.Bot {
	t.Helper()
	b, err := tgbot.New(f.Token(), tgbot.WithSkipGetMe(), tgbot.WithServerURL(f.URL()),
		tgbot.WithHTTPClient(5*time.Second, &http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unlimited is a Fake that enforces no flood limits, for tests that call
// it faster than Telegram allows.
func unlimited(t *testing.T) *Fake {
	t.Helper()
	f := Start(Options{Limits: &NoLimits})
	t.Cleanup(f.Close)
	return f
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGetMeAndToken(t *testing.T) {
	f := New(t)
	ctx := context.Background()
	me, err := client(t, f).GetMe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if me.Username != DefaultUsername || me.ID != 123456789 || !me.IsBot {
		t.Errorf("getMe = %+v", me)
	}
	bad, _ := tgbot.New("1:wrong", tgbot.WithSkipGetMe(), tgbot.WithServerURL(f.URL()))
	if _, err := bad.GetMe(ctx); !errors.Is(err, tgbot.ErrorUnauthorized) {
		t.Errorf("wrong token: err = %v, want unauthorized", err)
	}
}

func TestSendEditDelete(t *testing.T) {
	f := unlimited(t)
	b := client(t, f)
	ctx := context.Background()
	m1, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 5, Text: "<b>hi</b> &amp; bye", ParseMode: models.ParseModeHTML,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: tgbot.True()}})
	if err != nil {
		t.Fatal(err)
	}
	if m1.Text != "hi & bye" || m1.Chat.ID != 5 || m1.From == nil || m1.From.ID != f.Me().ID {
		t.Errorf("sendMessage result = %+v", m1)
	}
	m2, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 5, Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if m2.ID <= m1.ID {
		t.Errorf("message ids %d then %d: want increasing", m1.ID, m2.ID)
	}
	if _, err := b.EditMessageText(ctx, &tgbot.EditMessageTextParams{ChatID: 5, MessageID: m2.ID, Text: "edited"}); err != nil {
		t.Fatal(err)
	}
	_, err = b.EditMessageText(ctx, &tgbot.EditMessageTextParams{ChatID: 5, MessageID: m2.ID, Text: "edited"})
	if !errors.Is(err, tgbot.ErrorBadRequest) || !strings.Contains(err.Error(), "not modified") {
		t.Errorf("same edit: err = %v, want 400 not modified", err)
	}
	if _, err := b.DeleteMessage(ctx, &tgbot.DeleteMessageParams{ChatID: 5, MessageID: m1.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeleteMessage(ctx, &tgbot.DeleteMessageParams{ChatID: 5, MessageID: m1.ID}); !errors.Is(err, tgbot.ErrorBadRequest) {
		t.Errorf("second delete: err = %v, want 400", err)
	}
	sent := f.Sent(5)
	if len(sent) != 2 || !sent[0].Deleted || !sent[0].NoPreview || sent[0].ParseMode != "HTML" ||
		sent[1].Text != "edited" || sent[1].Edits() != 1 || sent[1].History[0] != "second" {
		t.Errorf("Sent = %+v", sent)
	}
	if got := f.Texts(5); len(got) != 1 || got[0] != "edited" {
		t.Errorf("Texts = %q", got)
	}
}

func TestHTMLRefused(t *testing.T) {
	f := New(t)
	_, err := client(t, f).SendMessage(context.Background(), &tgbot.SendMessageParams{ChatID: 5, Text: "<div>x</div>", ParseMode: models.ParseModeHTML})
	if !errors.Is(err, tgbot.ErrorBadRequest) || !strings.Contains(err.Error(), "can't parse entities") {
		t.Errorf("err = %v, want 400 can't parse entities", err)
	}
	if len(f.Sent(5)) != 0 {
		t.Error("a refused message was stored")
	}
}

func TestValidateHTML(t *testing.T) {
	tests := []struct {
		in, plain string
		ok        bool
	}{
		{"plain", "plain", true},
		{"<b>a</b> <i>b</i> <code>c</code>", "a b c", true},
		{`<pre><code class="language-go">x := 1</code></pre>`, "x := 1", true},
		{`<a href="https://x.y/?a=1&amp;b=2">link</a>`, "link", true},
		{`<span class="tg-spoiler">s</span>`, "s", true},
		{"&lt;tag&gt; &amp; &quot;q&quot; &#39; &#x41;", `<tag> & "q" ' A`, true},
		{"AT&T", "AT&T", true},
		{"<blockquote expandable>q</blockquote>", "q", true},
		{"a < b", "", false},
		{"<div>x</div>", "", false},
		{"<b>x", "", false},
		{"<b><i>x</b></i>", "", false},
		{"x</b>", "", false},
		{"<span>x</span>", "", false},
	}
	for _, tt := range tests {
		plain, err := ValidateHTML(tt.in)
		if (err == nil) != tt.ok || (tt.ok && plain != tt.plain) {
			t.Errorf("ValidateHTML(%q) = %q, %v; want %q, ok=%v", tt.in, plain, err, tt.plain, tt.ok)
		}
	}
}

func TestMessageTooLong(t *testing.T) {
	f := unlimited(t)
	b := client(t, f)
	ctx := context.Background()
	if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 1, Text: strings.Repeat("a", 4096)}); err != nil {
		t.Errorf("4096 chars: %v", err)
	}
	// 2049 emoji are 4098 UTF-16 units.
	if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 1, Text: strings.Repeat("😀", 2049)}); !errors.Is(err, tgbot.ErrorBadRequest) {
		t.Errorf("4098 units: err = %v, want 400", err)
	}
}

func TestUploads(t *testing.T) {
	f := unlimited(t)
	b := client(t, f)
	ctx := context.Background()
	img := pngBytes(t, 40, 30)
	m, err := b.SendPhoto(ctx, &tgbot.SendPhotoParams{ChatID: 9, Caption: "shot",
		Photo: &models.InputFileUpload{Filename: "page.png", Data: bytes.NewReader(img)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Photo) != 1 || m.Photo[0].Width != 40 || m.Caption != "shot" {
		t.Errorf("sendPhoto result = %+v", m)
	}
	reqs := f.RequestsFor("sendPhoto")
	if len(reqs) != 1 || reqs[0].ChatID() != 9 {
		t.Fatalf("requests = %+v", reqs)
	}
	file := reqs[0].Files["photo"]
	if file.Filename != "page.png" || !bytes.Equal(file.Data, img) {
		t.Errorf("uploaded %q (%d bytes), want page.png (%d bytes)", file.Filename, len(file.Data), len(img))
	}

	// Too narrow for a photo.
	_, err = b.SendPhoto(ctx, &tgbot.SendPhotoParams{ChatID: 9,
		Photo: &models.InputFileUpload{Filename: "strip.png", Data: bytes.NewReader(pngBytes(t, 1, 100))}})
	if !errors.Is(err, tgbot.ErrorBadRequest) || !strings.Contains(err.Error(), "PHOTO_INVALID_DIMENSIONS") {
		t.Errorf("1x100 photo: err = %v", err)
	}
	_, err = b.SendPhoto(ctx, &tgbot.SendPhotoParams{ChatID: 9,
		Photo: &models.InputFileUpload{Filename: "x.png", Data: strings.NewReader("\x89PNG\r\n\x1a\nbroken")}})
	if !errors.Is(err, tgbot.ErrorBadRequest) || !strings.Contains(err.Error(), "IMAGE_PROCESS_FAILED") {
		t.Errorf("broken photo: err = %v", err)
	}

	d, err := b.SendDocument(ctx, &tgbot.SendDocumentParams{ChatID: 9,
		Document: &models.InputFileUpload{Filename: "notes.txt", Data: strings.NewReader("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Document == nil || d.Document.FileName != "notes.txt" || d.Document.FileSize != 5 {
		t.Errorf("sendDocument result = %+v", d.Document)
	}
	sent := f.Sent(9)
	if len(sent) != 2 || sent[0].Method != "sendPhoto" || sent[1].File == nil || string(sent[1].File.Data) != "hello" {
		t.Errorf("Sent = %+v", sent)
	}
}

func TestFailNext(t *testing.T) {
	f := New(t)
	f.FailNext("sendMessage", http.StatusTooManyRequests, "", 7)
	f.FailNext("sendMessage", http.StatusInternalServerError, "", 0)
	b := client(t, f)
	ctx := context.Background()
	params := &tgbot.SendMessageParams{ChatID: 1, Text: "x"}
	_, err := b.SendMessage(ctx, params)
	var tooMany *tgbot.TooManyRequestsError
	if !errors.As(err, &tooMany) || tooMany.RetryAfter != 7 {
		t.Errorf("first: err = %v, want 429 retry_after 7", err)
	}
	if _, err := b.SendMessage(ctx, params); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("second: err = %v, want 500", err)
	}
	if _, err := b.SendMessage(ctx, params); err != nil {
		t.Errorf("third: %v", err)
	}

	// The raw answer is Telegram's shape.
	f.FailNext("getMe", http.StatusTooManyRequests, "", 3)
	resp, err := http.Post(f.URL()+"/bot"+f.Token()+"/getMe", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var v struct {
		OK          bool   `json:"ok"`
		ErrorCode   int    `json:"error_code"`
		Description string `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(body, &v); err != nil || resp.StatusCode != 429 || v.OK || v.ErrorCode != 429 || v.Parameters.RetryAfter != 3 ||
		v.Description != "Too Many Requests: retry after 3" {
		t.Errorf("answer %d %s", resp.StatusCode, body)
	}
	if reqs := f.RequestsFor("sendMessage"); len(reqs) != 3 || reqs[0].Status != 429 || reqs[1].Status != 500 || reqs[2].Status != 200 {
		t.Errorf("recorded statuses: %+v", reqs)
	}
}

func TestLongPoll(t *testing.T) {
	f := New(t)
	b, err := tgbot.New(f.Token(), tgbot.WithSkipGetMe(), tgbot.WithServerURL(f.URL()),
		tgbot.WithHTTPClient(3*time.Second, &http.Client{Timeout: 10 * time.Second}),
		tgbot.WithNotAsyncHandlers())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *models.Update, 10)
	b.RegisterHandlerMatchFunc(func(*models.Update) bool { return true }, func(_ context.Context, _ *tgbot.Bot, u *models.Update) { got <- u })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Start(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	// The poll is waiting when the message arrives.
	if _, err := f.WaitFor("getUpdates", 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	id := f.Message(42, 7, "/start@"+DefaultUsername+" now")
	f.Message(-1001234567890, 7, "hi @"+DefaultUsername)
	for i, want := range []string{"/start@" + DefaultUsername + " now", "hi @" + DefaultUsername} {
		select {
		case u := <-got:
			if u.Message.Text != want {
				t.Errorf("update %d: %q, want %q", i, u.Message.Text, want)
			}
			if i == 0 && (u.Message.ID != id || u.Message.Chat.Type != models.ChatTypePrivate ||
				len(u.Message.Entities) != 1 || u.Message.Entities[0].Type != models.MessageEntityTypeBotCommand) {
				t.Errorf("update 0 = %+v", u.Message)
			}
			if i == 1 && (u.Message.Chat.Type != models.ChatTypeSupergroup || len(u.Message.Entities) != 1 ||
				u.Message.Entities[0].Offset != 3) {
				t.Errorf("update 1 = %+v", u.Message)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("update %d not delivered", i)
		}
	}
}

// The fake marks commands and mentions as Telegram does, offsets in UTF-16
// code units.
func TestEntities(t *testing.T) {
	mention := func(off, n int) models.MessageEntity {
		return models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: off, Length: n}
	}
	tests := []struct {
		text string
		want []models.MessageEntity
	}{
		{"hello", nil},
		{"@volcanic_test_bot hi", []models.MessageEntity{mention(0, 18)}},
		{"Ⱥ @volcanic_test_bot", []models.MessageEntity{mention(2, 18)}},
		{"😀 @volcanic_test_bot, hi", []models.MessageEntity{mention(3, 18)}},
		{"(@ab) @a", []models.MessageEntity{mention(1, 3)}},
		{"mail x@volcanic_test_bot", nil},
		{"é@volcanic_test_bot", nil},
		{"@volcanic_test_botë", nil},
		{"@" + strings.Repeat("a", 33), nil},
		{"/start@volcanic_test_bot now @user1002", []models.MessageEntity{
			{Type: models.MessageEntityTypeBotCommand, Length: 24}, mention(29, 9),
		}},
	}
	for _, tt := range tests {
		if got := entitiesOf(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("entitiesOf(%q) = %+v, want %+v", tt.text, got, tt.want)
		}
	}
}

// In process, the fake runs inside a synctest bubble: a long poll with
// nothing to deliver waits its timeout on the bubble's clock, at once in
// real time, and a message ends it.
func TestInProcessLongPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewInProcess(t)
		poll := func() []models.Update {
			t.Helper()
			resp, err := f.Client().PostForm(f.URL()+"/bot"+f.Token()+"/getUpdates", url.Values{"timeout": {"59"}})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var v struct {
				OK     bool            `json:"ok"`
				Result []models.Update `json:"result"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || !v.OK {
				t.Fatalf("getUpdates answered %d: %v", resp.StatusCode, err)
			}
			return v.Result
		}
		start := time.Now()
		if updates := poll(); len(updates) != 0 {
			t.Fatalf("updates %+v", updates)
		}
		if waited := time.Since(start); waited != 59*time.Second {
			t.Errorf("the idle poll took %v, want 59s", waited)
		}

		start = time.Now()
		go func() {
			time.Sleep(10 * time.Second)
			f.Message(42, 7, "hello")
		}()
		if updates := poll(); len(updates) != 1 || updates[0].Message.Text != "hello" {
			t.Fatalf("updates %+v", updates)
		}
		if waited := time.Since(start); waited != 10*time.Second {
			t.Errorf("the poll ended after %v, want 10s", waited)
		}

		// go-telegram/bot works through the client too.
		b, err := tgbot.New(f.Token(), tgbot.WithSkipGetMe(), tgbot.WithServerURL(f.URL()),
			tgbot.WithHTTPClient(60*time.Second, f.Client()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.SendMessage(context.Background(), &tgbot.SendMessageParams{ChatID: 42, Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		if texts := f.Texts(42); len(texts) != 1 || texts[0] != "hi" {
			t.Errorf("sent %q", texts)
		}
	})
}
