package bot

import (
	"context"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// DefaultAlbumWait is how long the bot waits for more parts of an album:
// photos and files sent together arrive as separate messages sharing a
// media group id, within about a second.
const DefaultAlbumWait = 1500 * time.Millisecond

// album is the parts of one media group received so far in a chat.
type album struct {
	group string
	from  int64  // who sent the first part
	text  string // the caption; Telegram clients put it on one part
	files []session.Attachment
	keys  []int64 // the inbox entries of its parts, done with it
	timer *time.Timer
}

// albums collects the parts of media groups per chat, so that an album
// reaches the session as one message. It is used from the chats' workers
// and from the timers; each chat's parts come from its worker in order.
type albums struct {
	wait time.Duration
	// flush is called (from a timer) when a chat's album has waited long
	// enough; it must queue the delivery on the chat's worker.
	flush func(place chat.Place, group string)

	mu      sync.Mutex
	pending map[chat.Place]*album
}

func newAlbums(wait time.Duration, flush func(place chat.Place, group string)) *albums {
	return &albums{wait: wait, flush: flush, pending: map[chat.Place]*album{}}
}

// add appends a part to chat's album for group and restarts its timer.
// An album of another group still pending is returned to be delivered
// first.
func (a *albums) add(place chat.Place, from int64, group, text string, files []session.Attachment, keys []int64) (previous *album) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.pending[place]
	if cur != nil && cur.group != group {
		cur.timer.Stop()
		previous, cur = cur, nil
	}
	if cur == nil {
		cur = &album{group: group, from: from}
		a.pending[place] = cur
	} else {
		cur.timer.Stop()
	}
	if cur.text == "" {
		cur.text = text
	}
	cur.files = append(cur.files, files...)
	cur.keys = append(cur.keys, keys...)
	cur.timer = time.AfterFunc(a.wait, func() { a.flush(place, group) })
	return previous
}

// has reports whether chat has a pending album of group.
func (a *albums) has(place chat.Place, group string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.pending[place]
	return cur != nil && cur.group == group
}

// take removes and returns chat's pending album when it is of group (any
// group when group is empty); nil when there is none.
func (a *albums) take(place chat.Place, group string) *album {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.pending[place]
	if cur == nil || (group != "" && cur.group != group) {
		return nil
	}
	cur.timer.Stop()
	delete(a.pending, place)
	return cur
}

// deliverAlbum hands a completed album to the session as one message;
// its updates are done in the inbox when the session takes it, or now when
// it does not.
func (b *Bot) deliverAlbum(ctx context.Context, place chat.Place, al *album) {
	if al == nil {
		return
	}
	if len(al.files) == 0 || !b.deliver(ctx, place, al.from, al.text, al.files, al.keys) {
		b.tg.Done(al.keys...)
	}
}

// flushAlbum runs from an album's timer: the delivery is queued on the
// chat's worker, after any part still waiting there.
func (b *Bot) flushAlbum(place chat.Place, group string) {
	if !b.disp.submit(place, func(ctx context.Context) {
		b.deliverAlbum(ctx, place, b.albums.take(place, group))
	}) {
		b.log.Warn("album not delivered: the chat's queue is full or the bot is stopping", "chat", place)
	}
}
