package session

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A chat whose turn a restart cut off is told so once, after the restart,
// without a model call; a chat whose turn ended is told nothing.
func TestResumeTellsACutOffChatOnce(t *testing.T) {
	dir := t.TempDir()
	inModel := make(chan struct{}, 1)
	first := newEnv(t, func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if llmtest.LastUserText(req) == "slow" {
			inModel <- struct{}{}
			<-ctx.Done() // the shutdown cuts it off
			return llm.Response{}, ctx.Err()
		}
		return echoText(ctx, req)
	}, envOptions{dataDir: dir})
	first.deliver(chat.In(80), "done already")
	first.chat.waitTexts(t, chat.In(80), 1)
	first.deliver(chat.In(81), "slow")
	await(t, inModel, "the slow turn")
	first.close()
	if _, err := os.Stat(turnMarkPath(first.manager.Private(chat.In(81)))); err != nil {
		t.Fatalf("the cut-off turn left no mark: %v", err)
	}
	if _, err := os.Stat(turnMarkPath(first.manager.Private(chat.In(80)))); err == nil {
		t.Fatal("a turn that ended left its mark")
	}

	second := newEnv(t, echoText, envOptions{dataDir: dir})
	if n, err := second.manager.Resume(); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want 1 chat", n, err)
	}
	if got := second.chat.waitTexts(t, chat.In(81), 1); got[0] != RestartNotice {
		t.Errorf("chat 81 was told %q", got)
	}
	second.deliver(chat.In(81), "continue")
	got := second.chat.waitTexts(t, chat.In(81), 2)
	if got[1] != "re: continue" {
		t.Errorf("after the notice: %q", got)
	}
	if reqs := second.model.Requests(); len(reqs) != 1 || !strings.Contains(textsOf(reqs[0].Messages), RestartNotice) {
		t.Errorf("the model was called %d times; the notice is in its history: %v", len(reqs), reqs)
	}
	if n := len(second.chat.Texts(chat.In(80))); n != 0 {
		t.Errorf("chat 80, whose turn ended, was told %q", second.chat.Texts(chat.In(80)))
	}
	second.close()

	third := newEnv(t, echoText, envOptions{dataDir: dir})
	if n, err := third.manager.Resume(); err != nil || n != 0 {
		t.Errorf("Resume after the notice = %d, %v; want 0: the chat is told once", n, err)
	}
}

// A ready answer still goes out while the bot shuts down: Telegram takes
// it after the shutdown began (another chat's model call was cut off
// already), within the grace. Before, the shutdown cancelled its send.
func TestAReadyAnswerGoesOutDuringTheShutdown(t *testing.T) {
	dir := t.TempDir()
	cutOff := make(chan struct{})
	first := newEnv(t, func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if llmtest.LastUserText(req) == "slow" {
			<-ctx.Done() // the shutdown began
			close(cutOff)
			return llm.Response{}, ctx.Err()
		}
		return echoText(ctx, req)
	}, envOptions{dataDir: dir, answerGrace: time.Minute})
	first.deliver(chat.In(85), "slow")
	first.chat.holdTexts.Store(new(chat.In(84)))
	first.deliver(chat.In(84), "last words")
	await(t, first.chat.held, "the answer on its way")
	closed := make(chan struct{})
	go func() {
		first.close()
		close(closed)
	}()
	await(t, cutOff, "the shutdown")
	close(first.chat.release)
	await(t, closed, "the manager's close")
	first.chat.holdTexts.Store(nil)
	if got := first.chat.Texts(chat.In(84)); !slices.Equal(got, []string{"re: last words"}) {
		t.Errorf("chat 84 got %q during the shutdown, want its answer", got)
	}
	if _, err := os.Stat(turnMarkPath(first.manager.Private(chat.In(84)))); err == nil {
		t.Error("a delivered answer left its mark: it would be sent again")
	}
}

// An answer the shutdown kept from the chat (it was in the transcript, but
// Telegram had not taken it within the grace) is sent at the next start,
// once, without a model call. Before, the turn counted as answered: the
// answer was lost, and the log said only "message not delivered …
// context canceled".
func TestAnAnswerTheShutdownKeptIsSentAtTheNextStart(t *testing.T) {
	dir := t.TempDir()
	first := newEnv(t, echoText, envOptions{dataDir: dir, answerGrace: time.Millisecond})
	first.chat.holdTexts.Store(new(chat.In(84)))
	first.deliver(chat.In(84), "last words")
	await(t, first.chat.held, "the answer on its way")
	first.close()
	if _, err := os.Stat(turnMarkPath(first.manager.Private(chat.In(84)))); err != nil {
		t.Fatalf("the undelivered answer left no mark: %v", err)
	}

	second := newEnv(t, echoText, envOptions{dataDir: dir})
	if n, err := second.manager.Resume(); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want 1 chat", n, err)
	}
	if got := second.chat.waitTexts(t, chat.In(84), 1); got[0] != "re: last words" {
		t.Errorf("chat 84 was sent %q, want its answer", got)
	}
	second.deliver(chat.In(84), "next")
	if got := second.chat.waitTexts(t, chat.In(84), 2); !slices.Equal(got, []string{"re: last words", "re: next"}) {
		t.Errorf("texts = %q", got)
	}
	if reqs := second.model.Requests(); len(reqs) != 1 {
		t.Errorf("the model was called %d times, want once (for \"next\")", len(reqs))
	}
	second.close()

	third := newEnv(t, echoText, envOptions{dataDir: dir})
	if n, err := third.manager.Resume(); err != nil || n != 0 {
		t.Errorf("Resume after the answer went out = %d, %v; want 0: it is sent once", n, err)
	}
}

// An answer whose first parts reached the chat before the shutdown cut
// the rest off: the next start sends the rest only (ResumingChat), once.
func TestAnAnswerPartlySentBeforeTheShutdownIsFinishedAtTheNextStart(t *testing.T) {
	dir := t.TempDir()
	first := newEnv(t, echoText, envOptions{dataDir: dir, answerGrace: time.Millisecond})
	first.chat.holdTexts.Store(new(chat.In(84)))
	first.chat.heldSent.Store(2)
	first.deliver(chat.In(84), "last words")
	await(t, first.chat.held, "the answer on its way")
	first.close()
	if mark, err := os.ReadFile(turnMarkPath(first.manager.Private(chat.In(84)))); err != nil || string(mark) != undeliveredMark+"sent 2\n" {
		t.Fatalf("the mark holds %q (%v), want the parts sent", mark, err)
	}

	second := newEnv(t, echoText, envOptions{dataDir: dir})
	if n, err := second.manager.Resume(); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want 1 chat", n, err)
	}
	if got := second.chat.waitTexts(t, chat.In(84), 1); !slices.Equal(got, []string{"[from 2] re: last words"}) {
		t.Errorf("chat 84 was sent %q, want the rest of its answer", got)
	}
	second.close()
	third := newEnv(t, echoText, envOptions{dataDir: dir})
	if n, err := third.manager.Resume(); err != nil || n != 0 {
		t.Errorf("Resume after the rest went out = %d, %v; want 0", n, err)
	}
}

func TestParseUndelivered(t *testing.T) {
	for _, tc := range []struct {
		mark string
		sent int
		ok   bool
	}{
		{"", 0, false},
		{undeliveredMark, 0, true},
		{undeliveredText(3), 3, true},
		{undeliveredMark + "sent x\n", 0, true},
		{undeliveredMark + "sent -4\n", 0, true},
		{"answer not deliv", 0, false},
	} {
		if sent, ok := parseUndelivered(tc.mark); sent != tc.sent || ok != tc.ok {
			t.Errorf("parseUndelivered(%q) = %d, %v; want %d, %v", tc.mark, sent, ok, tc.sent, tc.ok)
		}
	}
}

// A mark without an unanswered message (the shutdown came right after the
// answer) sends nothing and is removed.
func TestResumeWithAnAnsweredConversationSaysNothing(t *testing.T) {
	logs := &recordHandler{level: slog.LevelDebug}
	e := newEnv(t, echoText, envOptions{logger: slog.New(logs)})
	writeTranscript(t, e, chat.In(82), `{"role":"user","parts":[{"kind":"text","text":"hi"}]}`+"\n"+
		`{"role":"assistant","parts":[{"kind":"text","text":"hello"}]}`+"\n")
	if err := os.WriteFile(turnMarkPath(e.manager.Private(chat.In(82))), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := e.manager.Resume(); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v", n, err)
	}
	logs.waitRecord(t, "nothing to tell")
	if _, err := os.Stat(turnMarkPath(e.manager.Private(chat.In(82)))); err == nil {
		t.Error("the mark is still there")
	}
	e.deliver(chat.In(82), "next")
	if got := e.chat.waitTexts(t, chat.In(82), 1); !slices.Equal(got, []string{"re: next"}) {
		t.Errorf("texts = %q: the resume said something", got)
	}
}

// A delivered message is taken once the transcript holds it, or once the
// chat was told it could not be handled, or dropped by /new; a message the
// shutdown left waiting is not taken, so that the bot hands it in again
// after the restart.
func TestMessagesAreTakenOnlyWhenTheChatNoLongerNeedsThem(t *testing.T) {
	type taken struct {
		mu    sync.Mutex
		texts []string
	}
	var tk taken
	takenFn := func(e *env, chat int64, text string) func() {
		return func() {
			// The transcript holds it already (or it was dropped or refused).
			b, _ := os.ReadFile(filepath.Join(e.manager.Private(inChat(chat)), transcriptName))
			tk.mu.Lock()
			tk.texts = append(tk.texts, text+map[bool]string{true: " (saved)", false: ""}[strings.Contains(string(b), `"`+text+`"`)])
			tk.mu.Unlock()
		}
	}
	takenTexts := func() []string {
		tk.mu.Lock()
		defer tk.mu.Unlock()
		return slices.Clone(tk.texts)
	}
	inModel := make(chan struct{}, 1)
	e := newEnv(t, func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if strings.HasPrefix(llmtest.LastUserText(req), "block") {
			inModel <- struct{}{}
			<-ctx.Done()
			return llm.Response{}, ctx.Err()
		}
		return echoText(ctx, req)
	}, envOptions{})
	disk := &fullDisk{room: 0} // chat 91's disk is full
	e.manager.wrapTranscript = func(f transcriptFile) transcriptFile {
		if name := f.(*os.File).Name(); filepath.Base(filepath.Dir(name)) != "91" {
			return f
		}
		disk.transcriptFile = f
		return disk
	}
	deliver := func(chat int64, text string) {
		t.Helper()
		if err := e.manager.Deliver(inChat(chat), Message{Text: text, Taken: takenFn(e, chat, text)}); err != nil {
			t.Fatal(err)
		}
	}
	deliver(90, "answered")
	e.chat.waitTexts(t, chat.In(90), 1)

	deliver(90, "block one")
	await(t, inModel, "the blocking turn")
	deliver(90, "dropped by new")
	if err := e.manager.Reset(context.Background(), chat.In(90)); err != nil {
		t.Fatal(err)
	}
	e.chat.waitTexts(t, chat.In(90), 2) // "Stopped."

	deliver(91, "on a full disk")
	e.chat.waitTexts(t, chat.In(91), 1)

	deliver(92, "block two")
	await(t, inModel, "the second blocking turn")
	deliver(92, "waiting at shutdown")
	e.close()

	want := []string{"answered (saved)", "block one (saved)", "dropped by new", "on a full disk", "block two (saved)"}
	if got := takenTexts(); !slices.Equal(got, want) {
		t.Errorf("taken: %q, want %q", got, want)
	}
}

func textsOf(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			b.WriteString(p.Text + "\n")
		}
	}
	return b.String()
}
