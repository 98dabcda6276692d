package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

var (
	jobRunsDesc = prometheus.NewDesc("volcanicbot_schedule_runs_total",
		"Scheduled runs by outcome: started (second attempts after a restart too), failed (or interrupted twice), "+
			"late (started over a minute after their time), unchanged (a watcher's answer, same as the last sent: not sent).",
		[]string{"outcome"}, nil)
	jobDeliveriesDesc = prometheus.NewDesc("volcanicbot_schedule_deliveries_total",
		"Scheduled answers by delivery: delivered, retried (a try that failed and is tried again), refused (for good: the chat is gone, the job paused).",
		[]string{"outcome"}, nil)
	jobsDesc = prometheus.NewDesc("volcanicbot_schedule_jobs",
		"Scheduled tasks now: active (still to run), paused, running, pending (answers waiting for delivery).", []string{"state"}, nil)
)

// scheduleCollector reads the scheduler at each scrape.
type scheduleCollector struct{ m *metrics }

func (scheduleCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobRunsDesc
	ch <- jobDeliveriesDesc
	ch <- jobsDesc
}

func (c scheduleCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.schedule.Load()
	if f == nil {
		return
	}
	st := (*f)()
	counter := func(d *prometheus.Desc, v int64, label string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), label)
	}
	counter(jobRunsDesc, st.Runs, "started")
	counter(jobRunsDesc, st.Failures, "failed")
	counter(jobRunsDesc, st.LateRuns, "late")
	counter(jobRunsDesc, st.Unchanged, "unchanged")
	counter(jobDeliveriesDesc, st.Deliveries, "delivered")
	counter(jobDeliveriesDesc, st.DeliveryRetries, "retried")
	counter(jobDeliveriesDesc, st.DeliveryFailures, "refused")
	gauge := func(v int, label string) {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(v), label)
	}
	gauge(st.Jobs, "active")
	gauge(st.Paused, "paused")
	gauge(st.Running, "running")
	gauge(st.PendingDeliveries, "pending")
}

// scheduleStats is what the collector reads: the scheduler's Stats.
type scheduleStats = func() schedule.Stats
