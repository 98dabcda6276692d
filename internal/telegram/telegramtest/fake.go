// Package telegramtest is a fake Telegram Bot API for tests: an
// httptest server that speaks enough of the API for go-telegram/bot (and
// so for package bot and the whole daemon). It queues updates for long
// polling — or posts them to the webhook once setWebhook named one —,
// answers the send, edit and delete methods with realistic JSON,
// keeps what the bot sent per chat (inline keyboards too), delivers button
// presses as callback_query updates (Press, Callback) and records their
// answers, records every request, enforces Telegram's flood limits with
// 429s (Limits), keeps forums' topics and checks the message_thread_id of
// every send against them (TopicMessage), and can be scripted to fail.
//
//	f := telegramtest.New(t)
//	// point the bot at f.URL() with token f.Token()
//	f.Message(42, 42, "hello")
//	f.WaitFor("sendMessage", 1, 5*time.Second)
//	msgs := f.Sent(42)
//
// NewInProcess serves the same API without a listener, through the HTTP
// client of Client, for tests inside a testing/synctest bubble.
package telegramtest

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Defaults for Options.
const (
	DefaultToken    = "123456789:AAFakeTokenForVolcanicbotTests_0123456"
	DefaultUsername = "volcanic_test_bot"
)

// Options configure a Fake. Zero values take the defaults.
type Options struct {
	// Token is the only token the fake accepts (401 otherwise);
	// DefaultToken when empty. The bot's user id is its numeric prefix.
	Token string
	// Username is the bot's username (without @) returned by getMe.
	Username string
	// InProcess serves the API without a network listener: URL names a
	// host that does not resolve, and only the HTTP client of Client
	// reaches the fake, which answers in the calling goroutine. Use it for
	// a Fake inside a testing/synctest bubble, where a goroutine blocked
	// on a socket is not durably blocked and would keep the bubble's clock
	// from advancing. (Webhook posts still go over the network.)
	InProcess bool
	// Limits are the flood limits enforced; nil: TelegramLimits. Give
	// &NoLimits to enforce none.
	Limits *Limits
	// NoDrafts answers sendMessageDraft as a Bot API without it does
	// (404, method not found). Otherwise drafts are taken in private
	// chats and refused (400) in others.
	NoDrafts bool
}

// Fake is a fake Bot API server. Its methods are safe for concurrent use.
type Fake struct {
	srv    *httptest.Server // nil when in process
	token  string
	me     models.User
	closed chan struct{}
	once   sync.Once

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced whenever state changes
	updates   []models.Update
	updateID  int64
	messageID int
	requests  []Request
	counts    map[string]int // requests per lower-cased method
	messages  []*Message
	failures  map[string][]failure
	commands  []models.BotCommand
	limiter   *limiter
	noDrafts  bool
	drafts    []Draft

	callbacks   map[string]*CallbackAnswer // pressed: nil until answered
	callbackSeq int
	allowed     []string // the last allowed_updates the bot gave

	// refusing are the users whose private chats refuse the bot's sends,
	// with Telegram's description why (private.go).
	refusing map[int64]string

	// topics are the forums' topics by chat (topics.go); a chat present
	// is a forum.
	topics map[int64]map[int]bool
	// closedTopics are the topics closed (CloseTopic) by chat.
	closedTopics map[int64]map[int]bool

	files   map[string]storedFile // by file id: what users sent
	fileSeq int
	// localDir, when set, makes the fake a local Bot API server in
	// --local mode working in that folder (local.go).
	localDir string

	webhookURL    string // set by setWebhook: updates are posted there
	webhookSecret string
	delivering    bool // the webhook poster runs
}

// Request is one API call the fake received.
type Request struct {
	Method string            // as in the URL, e.g. "sendMessage"
	Params map[string]string // form fields (JSON values stay JSON text)
	Files  map[string]File   // uploaded files by field name
	Status int               // HTTP status the fake answered
	Time   time.Time         // when it arrived
}

// ChatID is the request's chat_id parameter (0 if absent or not numeric).
func (r Request) ChatID() int64 {
	id, _ := strconv.ParseInt(r.Params["chat_id"], 10, 64)
	return id
}

// File is an uploaded file.
type File struct {
	Field    string // form field, e.g. "photo"
	Filename string
	Data     []byte
}

// Message is a message the bot sent, with its edits and deletion applied.
type Message struct {
	ID     int
	ChatID int64
	// ThreadID is the forum topic it was sent in (message_thread_id; 0:
	// none).
	ThreadID int
	// Method that created it: sendMessage, sendPhoto, sendDocument or sendVoice.
	Method string
	// Text is the current text (the caption for files), as sent, tags
	// included when ParseMode is HTML.
	Text      string
	ParseMode string
	// NoPreview is true when link_preview_options disabled previews.
	NoPreview bool
	// File is the upload of sendPhoto and sendDocument; nil when the file
	// was given by id or URL (then FileRef holds it).
	File    *File
	FileRef string
	// History holds every text the message had, the current one last.
	History []string
	Deleted bool
	// Keyboard is the message's inline keyboard, nil when it has none.
	Keyboard [][]Button
}

// Edits is how many times the message was edited.
func (m Message) Edits() int { return max(len(m.History)-1, 0) }

type failure struct {
	status      int
	description string
	retryAfter  int
}

// New starts a Fake with default options and closes it when the test ends.
func New(tb testing.TB) *Fake {
	tb.Helper()
	f := Start(Options{})
	tb.Cleanup(f.Close)
	return f
}

// NewInProcess is New with Options.InProcess: point the bot at URL with
// the client of Client. It suits tests inside a testing/synctest bubble.
func NewInProcess(tb testing.TB) *Fake {
	tb.Helper()
	f := Start(Options{InProcess: true})
	tb.Cleanup(f.Close)
	return f
}

// Start starts a Fake; Close stops it.
func Start(o Options) *Fake {
	if o.Token == "" {
		o.Token = DefaultToken
	}
	if o.Username == "" {
		o.Username = DefaultUsername
	}
	id, _ := strconv.ParseInt(strings.SplitN(o.Token, ":", 2)[0], 10, 64)
	limits := TelegramLimits
	if o.Limits != nil {
		limits = *o.Limits
	}
	f := &Fake{
		limiter:   newLimiter(limits),
		noDrafts:  o.NoDrafts,
		token:     o.Token,
		me:        models.User{ID: id, IsBot: true, FirstName: "Volcanic Test", Username: o.Username},
		closed:    make(chan struct{}),
		changed:   make(chan struct{}),
		failures:  map[string][]failure{},
		counts:    map[string]int{},
		callbacks: map[string]*CallbackAnswer{},
	}
	if !o.InProcess {
		f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	}
	return f
}

// Close releases pending long polls and stops the server.
func (f *Fake) Close() {
	f.once.Do(func() {
		close(f.closed)
		if f.srv != nil {
			f.srv.Close()
		}
	})
}

// inProcessURL is the base URL of an in-process fake: any host would do,
// as its client never dials; .invalid never resolves, should a request go
// elsewhere by mistake.
const inProcessURL = "http://telegramtest.invalid"

// URL is the server's base URL: the bot's TELEGRAM_API_URL.
func (f *Fake) URL() string {
	if f.srv == nil {
		return inProcessURL
	}
	return f.srv.URL
}

// Client is an HTTP client that reaches the fake: over the listener, or,
// in process, by calling its handler directly.
func (f *Fake) Client() *http.Client {
	if f.srv != nil {
		return f.srv.Client()
	}
	return &http.Client{Transport: handlerTransport{f}}
}

// handlerTransport answers a request by running the fake's handler in the
// caller's goroutine, so a long poll blocks only on the fake's channels
// and timers.
type handlerTransport struct{ f *Fake }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	rec := httptest.NewRecorder()
	t.f.serve(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err // the caller gave up: what the handler wrote is not an answer
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// Token is the token the fake accepts.
func (f *Fake) Token() string { return f.token }

// Me is the bot's user, as getMe returns it.
func (f *Fake) Me() models.User { return f.me }

// Commands are the commands of the last setMyCommands call.
func (f *Fake) Commands() []models.BotCommand {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.commands)
}

// notifyLocked wakes everyone waiting for a change. f.mu must be held.
func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// FailNext makes the next call of method fail with status and description
// (a default description when empty); retryAfter > 0 adds
// parameters.retry_after. Calls queue: two FailNext make two calls fail.
func (f *Fake) FailNext(method string, status int, description string, retryAfter int) {
	if description == "" {
		description = defaultDescription(status, retryAfter)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.ToLower(method)
	f.failures[key] = append(f.failures[key], failure{status, description, retryAfter})
}

func defaultDescription(status, retryAfter int) string {
	switch status {
	case http.StatusTooManyRequests:
		return fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)
	case http.StatusBadRequest:
		return "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case http.StatusInternalServerError:
		return "Internal Server Error"
	case http.StatusBadGateway:
		return "Bad Gateway"
	}
	return http.StatusText(status)
}

// Forget drops the requests and messages recorded so far (message ids keep
// increasing), so a long benchmark measures the bot, not the fake's memory.
func (f *Fake) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
	f.messages = nil
	f.drafts = nil
	clear(f.counts)
	f.notifyLocked()
}

// Requests returns every request received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// RequestsFor returns the requests of one method (case-insensitive).
func (f *Fake) RequestsFor(method string) []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requestsForLocked(method)
}

func (f *Fake) requestsForLocked(method string) []Request {
	var out []Request
	for _, r := range f.requests {
		if strings.EqualFold(r.Method, method) {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor waits until the fake has received at least n requests of method
// (failed ones included) and returns them, or returns an error after
// timeout.
func (f *Fake) WaitFor(method string, n int, timeout time.Duration) ([]Request, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		count := f.counts[strings.ToLower(method)]
		var got []Request
		if count >= n {
			got = f.requestsForLocked(method)
		}
		ch := f.changed
		f.mu.Unlock()
		if count >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return got, fmt.Errorf("telegramtest: %d %s requests after %v, want %d", len(got), method, timeout, n)
		case <-f.closed:
			return got, fmt.Errorf("telegramtest: closed with %d %s requests, want %d", len(got), method, n)
		}
	}
}

// Sent returns the messages the bot sent to chat, in order, deleted ones
// included (Deleted set).
func (f *Fake) Sent(chatID int64) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sentLocked(chatID)
}

func (f *Fake) sentLocked(chatID int64) []Message {
	var out []Message
	for _, m := range f.messages {
		if m.ChatID == chatID {
			c := *m
			c.History = slices.Clone(m.History)
			out = append(out, c)
		}
	}
	return out
}

// Texts returns the current texts of the messages the bot sent to chat
// with sendMessage that are not deleted.
func (f *Fake) Texts(chatID int64) []string {
	var out []string
	for _, m := range f.Sent(chatID) {
		if m.Method == "sendMessage" && !m.Deleted {
			out = append(out, m.Text)
		}
	}
	return out
}

// WaitSent waits until the bot has sent at least n messages (any method,
// deleted ones included) to chat and returns them.
func (f *Fake) WaitSent(chatID int64, n int, timeout time.Duration) ([]Message, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// The messages and the channel that tells of the next change, read
		// together: a message stored between the two would be missed.
		f.mu.Lock()
		got, ch := f.sentLocked(chatID), f.changed
		f.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return got, fmt.Errorf("telegramtest: %d messages in chat %d after %v, want %d", len(got), chatID, timeout, n)
		case <-f.closed:
			return got, fmt.Errorf("telegramtest: closed with %d messages in chat %d, want %d", len(got), chatID, n)
		}
	}
}

// WaitUntil waits until cond holds, looking again after every change the
// fake sees (a request answered, a message sent, edited or deleted, an
// update queued or confirmed), or returns an error after timeout. cond may
// call the fake's methods.
func (f *Fake) WaitUntil(cond func() bool, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// The channel first: a change while cond looks closes it.
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("telegramtest: not so after %v", timeout)
		case <-f.closed:
			return errors.New("telegramtest: closed while waiting")
		}
	}
}

// Unconfirmed is how many queued updates the bot has not confirmed yet:
// by a getUpdates with a higher offset, or a 200 to the webhook post.
func (f *Fake) Unconfirmed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.updates)
}

// WaitConfirmed waits until the bot has confirmed every queued update, as
// Telegram then forgets them: what the bot has not kept by then is lost.
func (f *Fake) WaitConfirmed(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		n, ch := len(f.updates), f.changed
		f.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("telegramtest: %d updates still unconfirmed after %v", n, timeout)
		case <-f.closed:
			return fmt.Errorf("telegramtest: closed with %d updates unconfirmed", n)
		}
	}
}

// Send queues an update for getUpdates. It fills in the update id and,
// for a message without one, the message id and date. It returns the
// update id.
func (f *Fake) Send(u models.Update) int64 {
	return f.SendAll(u)[0]
}

// SendAll queues updates at once, as Send does each: a long poll waiting
// now gets them all in one answer (after separate Sends it may return
// with the first alone). It returns their update ids.
func (f *Fake) SendAll(us ...models.Update) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]int64, len(us))
	for i, u := range us {
		ids[i] = f.queueLocked(u)
	}
	f.notifyLocked()
	return ids
}

// queueLocked queues u without telling anyone. f.mu must be held.
func (f *Fake) queueLocked(u models.Update) int64 {
	f.updateID++
	u.ID = f.updateID
	for _, m := range []*models.Message{u.Message, u.EditedMessage, u.ChannelPost} {
		if m != nil && m.ID == 0 {
			f.messageID++
			m.ID = f.messageID
		}
		if m != nil && m.Date == 0 {
			m.Date = int(time.Now().Unix())
		}
		if m != nil && m.From != nil {
			f.startedLocked(m.Chat.ID, m.From.ID)
		}
	}
	f.updates = append(f.updates, u)
	return u.ID
}

// Message queues a text message from user in chat and returns its message
// id. A positive chat id is a private chat, -100… a supergroup, any other
// negative id a group. Commands and @mentions get their entities.
func (f *Fake) Message(chatID, userID int64, text string) int {
	return f.send(f.NewMessage(chatID, userID, text))
}

// Reply queues a text message from user in chat that replies to message
// replyTo (one the bot sent, or any earlier id), and returns its id.
func (f *Fake) Reply(chatID, userID int64, text string, replyTo int) int {
	m := f.NewMessage(chatID, userID, text)
	orig := &models.Message{ID: replyTo, Chat: m.Chat, Date: m.Date}
	f.mu.Lock()
	for _, s := range f.messages {
		if s.ID == replyTo && s.ChatID == chatID {
			me := f.me
			orig.From = &me
			orig.Text = s.Text
		}
	}
	f.mu.Unlock()
	m.ReplyToMessage = orig
	return f.send(m)
}

func (f *Fake) send(m *models.Message) int {
	f.Send(models.Update{Message: m})
	return m.ID
}

// NewMessage builds (but does not queue) the message Message would send:
// adjust it and queue it with Send.
func (f *Fake) NewMessage(chatID, userID int64, text string) *models.Message {
	return &models.Message{
		From:     &models.User{ID: userID, FirstName: "User " + strconv.FormatInt(userID, 10), Username: "user" + strconv.FormatInt(userID, 10)},
		Date:     int(time.Now().Unix()),
		Chat:     chatOf(chatID),
		Text:     text,
		Entities: entitiesOf(text),
	}
}

func chatOf(id int64) models.Chat {
	switch {
	case id > 0:
		return models.Chat{ID: id, Type: models.ChatTypePrivate, FirstName: "User " + strconv.FormatInt(id, 10)}
	case id <= -1_000_000_000_000:
		return models.Chat{ID: id, Type: models.ChatTypeSupergroup, Title: "Supergroup " + strconv.FormatInt(id, 10)}
	default:
		return models.Chat{ID: id, Type: models.ChatTypeGroup, Title: "Group " + strconv.FormatInt(id, 10)}
	}
}

// entitiesOf marks in text what Telegram's server marks for these tests:
// a /command at the start (with its @botname), and @mentions by
// Telegram's rule — an "@" after no letter, digit or "_", then 2 to 32 of
// A–Z a–z 0–9 "_", then no letter, digit or "_" (letters and digits of
// any script count: "é@name" and "@nameé" are no mentions). Offsets and
// lengths are in UTF-16 code units, as Telegram sends them.
func entitiesOf(text string) []models.MessageEntity {
	var ents []models.MessageEntity
	if strings.HasPrefix(text, "/") {
		j := 1
		for j < len(text) && (isUsernameByte(text[j]) || text[j] == '@') {
			j++
		}
		if j > 1 {
			ents = append(ents, models.MessageEntity{Type: models.MessageEntityTypeBotCommand, Length: j})
		}
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '@' {
			continue
		}
		if prev, _ := utf8.DecodeLastRuneInString(text[:i]); i > 0 && isWordRune(prev) {
			continue
		}
		j := i + 1
		for j < len(text) && isUsernameByte(text[j]) {
			j++
		}
		next, _ := utf8.DecodeRuneInString(text[j:])
		if n := j - i - 1; n < 2 || n > 32 || j < len(text) && isWordRune(next) {
			continue
		}
		ents = append(ents, models.MessageEntity{Type: models.MessageEntityTypeMention,
			Offset: tgformat.UTF16Len(text[:i]), Length: j - i}) // the name is ASCII: bytes are units
		i = j - 1
	}
	return ents
}

func isUsernameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }
