package bot

import (
	"context"
	"sync"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// forms are the servers' forms open in the chats (Chat.Elicit): one at a
// time in a chat — a second waits for the first to end —, and the typed
// answers it takes from the chat's messages meanwhile.
type forms struct {
	mu    sync.Mutex
	slots map[chat.Place]*formSlot
	typed map[chat.Place]*listener
}

// formSlot is a chat's turn to ask: its token is held while a form is
// open; users counts who holds or waits for it, and the slot goes when
// nobody does.
type formSlot struct {
	token chan struct{}
	users int
}

// listener takes the messages typed in a chat while a form is open there,
// from the users who may answer it (may nil: anyone the bot allows).
type listener struct {
	may func(int64) bool
	ch  chan typedAnswer
}

// typedAnswer is a message typed as an answer.
type typedAnswer struct {
	text string
	user int64
	name string
}

// typedAnswers is how many typed answers may wait to be taken; more are
// dropped (someone typing faster than the form asks).
const typedAnswers = 4

func newForms() *forms {
	return &forms{slots: map[chat.Place]*formSlot{}, typed: map[chat.Place]*listener{}}
}

// acquire waits for chat's turn to ask, or ctx's end.
func (fs *forms) acquire(ctx context.Context, place chat.Place) (release func(), err error) {
	fs.mu.Lock()
	s := fs.slots[place]
	if s == nil {
		s = &formSlot{token: make(chan struct{}, 1)}
		fs.slots[place] = s
	}
	s.users++
	fs.mu.Unlock()
	leave := func() {
		fs.mu.Lock()
		if s.users--; s.users == 0 {
			delete(fs.slots, place)
		}
		fs.mu.Unlock()
	}
	select {
	case s.token <- struct{}{}:
		return func() { <-s.token; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// listen starts taking chat's typed answers (see offer) until unlisten.
func (fs *forms) listen(place chat.Place, may func(int64) bool) *listener {
	l := &listener{may: may, ch: make(chan typedAnswer, typedAnswers)}
	fs.mu.Lock()
	fs.typed[place] = l
	fs.mu.Unlock()
	return l
}

func (fs *forms) unlisten(place chat.Place, l *listener) {
	fs.mu.Lock()
	if fs.typed[place] == l {
		delete(fs.typed, place)
	}
	fs.mu.Unlock()
}

// offer hands a text message of user in chat to the form open there when
// user may answer it, and reports whether it was taken: then it goes
// nowhere else (not to the session, so not to the model).
func (fs *forms) offer(place chat.Place, user int64, name, text string) bool {
	fs.mu.Lock()
	l := fs.typed[place]
	fs.mu.Unlock()
	if l == nil || l.may != nil && !l.may(user) {
		return false
	}
	select {
	case l.ch <- typedAnswer{text: text, user: user, name: name}:
	default: // more than the form asks for: dropped, not passed on
	}
	return true
}
