package schedule

// Stats is what /metrics reports of the scheduler: counters since the
// start, and the gauges of now.
type Stats struct {
	Runs             int64 // runs started (second attempts too)
	Failures         int64 // runs that failed (or were interrupted twice)
	LateRuns         int64 // runs started more than LateAfter after their slot
	Unchanged        int64 // watcher runs whose answer was kept back
	Deliveries       int64 // texts delivered
	DeliveryRetries  int64 // tries that failed and are tried again
	DeliveryFailures int64 // deliveries refused for good (the chat gone)

	Jobs              int // jobs that still run (not done)
	Paused            int
	Running           int // runs under way
	PendingDeliveries int
	LedgerBytes       int64
}

// Stats is a snapshot of the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	for _, j := range s.l.st.jobs {
		if j.active() {
			st.Jobs++
		}
		if j.Paused {
			st.Paused++
		}
	}
	st.Running = len(s.cancels)
	for _, d := range s.l.st.dels {
		if d.State == Pending {
			st.PendingDeliveries++
		}
	}
	st.LedgerBytes = s.l.Size()
	return st
}
