package schedule

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// record is one line of the ledger: the new whole value of every object
// it touches. One line is one write: a run's end, the job's new state and
// the delivery it leaves are one record, so a crash keeps all or none.
type record struct {
	Job      *Job      `json:"job,omitempty"`
	Run      *Run      `json:"run,omitempty"`
	Delivery *Delivery `json:"delivery,omitempty"`
	// Remove is the id of a job cancelled.
	Remove string `json:"remove,omitempty"`
}

// state is what the ledger's records add up to: the jobs, each job's last
// run (finished or not), and the deliveries still pending plus each
// job's last. Older runs and deliveries are forgotten as newer ones come.
type state struct {
	jobs    map[string]*Job
	runs    map[string]*Run // by run id
	lastRun map[string]string
	dels    map[string]*Delivery // by run id
	lastDel map[string]string
	seq     int // the highest job number given
}

func newState() *state {
	return &state{
		jobs: map[string]*Job{}, runs: map[string]*Run{}, lastRun: map[string]string{},
		dels: map[string]*Delivery{}, lastDel: map[string]string{},
	}
}

// apply adds one record (the values are copied).
func (s *state) apply(r record) {
	if r.Job != nil {
		j := *r.Job
		s.jobs[j.ID] = &j
		if n, err := strconv.Atoi(strings.TrimPrefix(j.ID, "j")); err == nil && n > s.seq {
			s.seq = n
		}
	}
	if r.Run != nil {
		s.applyRun(*r.Run)
	}
	if r.Delivery != nil {
		s.applyDelivery(*r.Delivery)
	}
	if r.Remove != "" {
		delete(s.jobs, r.Remove)
		if id, ok := s.lastRun[r.Remove]; ok {
			delete(s.runs, id)
			delete(s.lastRun, r.Remove)
		}
	}
}

func (s *state) applyRun(run Run) {
	if _, ok := s.jobs[run.Job]; !ok {
		return // a run of a job cancelled since
	}
	if prev, ok := s.lastRun[run.Job]; ok && prev != run.ID {
		delete(s.runs, prev)
	}
	s.runs[run.ID] = &run
	s.lastRun[run.Job] = run.ID
}

func (s *state) applyDelivery(d Delivery) {
	last, hasLast := s.lastDel[d.Job]
	if d.State != Pending && hasLast && last != d.ID {
		delete(s.dels, d.ID) // an older delivery settled: forget it
		return
	}
	if hasLast && last != d.ID {
		if prev := s.dels[last]; prev != nil && prev.State != Pending {
			delete(s.dels, last)
		}
	}
	s.dels[d.ID] = &d
	s.lastDel[d.Job] = d.ID
}

// live counts the objects a compacted ledger holds.
func (s *state) live() int { return len(s.jobs) + len(s.runs) + len(s.dels) }

// records is the state written out: replaying them gives it back. Done
// jobs finished before forgetBefore, with nothing left to deliver, are
// left out.
func (s *state) records(forgetBefore time.Time) []record {
	var out []record
	jobs := sortedValues(s.jobs, func(j *Job) string { return j.ID })
	gone := map[string]bool{}
	for _, j := range jobs {
		run := s.runs[s.lastRun[j.ID]]
		del := s.dels[s.lastDel[j.ID]]
		if j.Done && run != nil && run.Finished.Before(forgetBefore) && (del == nil || del.State != Pending) {
			gone[j.ID] = true
			continue
		}
		out = append(out, record{Job: j})
	}
	for _, r := range sortedValues(s.runs, func(r *Run) string { return r.ID }) {
		if !gone[r.Job] {
			out = append(out, record{Run: r})
		}
	}
	dels := sortedValues(s.dels, func(d *Delivery) string { return d.ID })
	slices.SortStableFunc(dels, func(a, b *Delivery) int { return a.Created.Compare(b.Created) })
	for _, d := range dels {
		if !gone[d.Job] || d.State == Pending {
			out = append(out, record{Delivery: d})
		}
	}
	return out
}

// view is a job with its last run and delivery, copied.
func (s *state) view(j *Job) JobView {
	v := JobView{Job: *j}
	if r, ok := s.runs[s.lastRun[j.ID]]; ok {
		rc := *r
		v.LastRun = &rc
	}
	if d, ok := s.dels[s.lastDel[j.ID]]; ok {
		dc := *d
		v.Delivery = &dc
	}
	return v
}

// views lists the jobs keep selects, by place then by number.
func (s *state) views(keep func(*Job) bool) []JobView {
	var out []JobView
	for _, j := range s.jobs {
		if keep(j) {
			out = append(out, s.view(j))
		}
	}
	slices.SortFunc(out, func(a, b JobView) int {
		return cmp.Or(cmp.Compare(a.Job.Place.Chat, b.Job.Place.Chat), cmp.Compare(a.Job.Place.Topic, b.Job.Place.Topic),
			cmp.Compare(jobNumber(a.Job.ID), jobNumber(b.Job.ID)))
	})
	return out
}

func jobNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "j"))
	return n
}

func sortedValues[V any](m map[string]V, key func(V) string) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b V) int { return strings.Compare(key(a), key(b)) })
	return out
}
