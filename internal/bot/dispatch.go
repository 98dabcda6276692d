package bot

import (
	"context"
	"sync"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// maxChatQueue bounds one chat's (or forum topic's) backlog of updates.
const maxChatQueue = 256

// dispatcher runs each place's jobs — a chat's, or a forum topic's — in
// order on a worker goroutine of its own, started when the place has work
// and ended when its queue is empty: the topics of a forum are handled
// side by side, as their sessions run. submit never blocks, so the poller
// never waits on a chat.
type dispatcher struct {
	ctx context.Context
	run func(ctx context.Context, place chat.Place, job func(context.Context))

	mu     sync.Mutex
	queues map[chat.Place][]func(context.Context) // present while a worker runs
	closed bool                                   // no more jobs: wait may run
	wg     sync.WaitGroup
}

func newDispatcher(ctx context.Context, run func(context.Context, chat.Place, func(context.Context))) *dispatcher {
	return &dispatcher{ctx: ctx, run: run, queues: map[chat.Place][]func(context.Context){}}
}

// submit queues job for chat; false when the chat's queue is full or the
// dispatcher is closed.
func (d *dispatcher) submit(place chat.Place, job func(context.Context)) bool {
	return d.enqueue(place, job, maxChatQueue)
}

// submitKept queues the job of an update kept from the last run, which
// was accepted under the cap once already: the cap does not apply.
func (d *dispatcher) submitKept(place chat.Place, job func(context.Context)) bool {
	return d.enqueue(place, job, -1)
}

// enqueue queues job unless the dispatcher is closed or the chat already
// has limit jobs waiting (limit < 0: no cap).
func (d *dispatcher) enqueue(place chat.Place, job func(context.Context), limit int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	q, running := d.queues[place]
	if d.closed || limit >= 0 && len(q) >= limit {
		return false
	}
	d.queues[place] = append(q, job)
	if !running {
		d.wg.Add(1)
		go d.work(place)
	}
	return true
}

func (d *dispatcher) work(place chat.Place) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		q := d.queues[place]
		if len(q) == 0 {
			delete(d.queues, place)
			d.mu.Unlock()
			return
		}
		job := q[0]
		q[0] = nil
		d.queues[place] = q[1:]
		d.mu.Unlock()
		d.run(d.ctx, place, job)
	}
}

// closing reports whether the dispatcher refuses jobs because it closed.
func (d *dispatcher) closing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// close refuses further jobs; those queued still run.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// wait closes the dispatcher and returns when every worker has ended. Jobs
// still queued once the context ends run with that ended context, so they
// finish fast.
func (d *dispatcher) wait() {
	d.close()
	d.wg.Wait()
}
