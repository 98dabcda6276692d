package main

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/spend"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// metrics is what GET /metrics on HTTP_ADDR serves, in Prometheus's text
// format: the MCP servers' processes (live, waiting, memory, starts,
// failures, evictions, waits), their tool calls (count and latency), and
// the model's requests and tokens, the Bot API calls made to the chats
// (paced and not, 429s, updates coalesced), and the spend (the model's
// cost, the allowances reached). It is the MCP client's Observer and wraps
// the model.
type metrics struct {
	reg *prometheus.Registry
	// sendStats reads the bot's sender, once the bot exists.
	sendStats atomic.Pointer[func() telegram.SendStats]
	// spend reads the usage ledger, once it exists.
	spend atomic.Pointer[spendSource]
	// schedule reads the scheduler, once it exists.
	schedule atomic.Pointer[scheduleStats]

	starts, failures, evictions *prometheus.CounterVec
	waits, calls                *prometheus.HistogramVec
	modelRequests               *prometheus.CounterVec
	modelSeconds                prometheus.Histogram
	tokens                      *prometheus.CounterVec
}

var _ mcpclient.Observer = (*metrics)(nil)

// newMetrics registers the metrics; load reads the servers' processes at
// each scrape.
func newMetrics(load func() []mcpclient.ServerLoad) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	server := []string{"server"}
	m.starts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "volcanicbot_mcp_starts_total",
		Help: "Processes (or connections) of an MCP server started for a chat."}, server)
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "volcanicbot_mcp_start_failures_total",
		Help: "Starts of an MCP server for a chat that failed."}, server)
	m.evictions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "volcanicbot_mcp_evictions_total",
		Help: "Idle processes stopped to free a slot under the server's ceiling (maxLive) for another chat."}, server)
	m.waits = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "volcanicbot_mcp_slot_wait_seconds",
		Help: "How long calls waited for a slot under the server's ceiling.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 8)}, server)
	m.calls = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "volcanicbot_mcp_tool_call_seconds",
		Help: "Tool calls by server and outcome (ok, error, cancelled: stopped before the result), with their latency.", Buckets: prometheus.ExponentialBuckets(0.005, 3, 10)},
		[]string{"server", "outcome"})
	m.modelRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "volcanicbot_model_requests_total",
		Help: "Model requests by outcome (ok, error)."}, []string{"outcome"})
	m.modelSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "volcanicbot_model_request_seconds",
		Help: "Model request latency, retries included.", Buckets: prometheus.ExponentialBuckets(0.25, 2, 10)})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "volcanicbot_model_tokens_total",
		Help: "Model tokens: input (cached included), cached (read from the prompt cache), output; estimated: of input and output, " +
			"those the bot counted itself for requests that ended early (stopped, timed out, broken off)."}, []string{"kind"})
	m.reg.MustRegister(m.starts, m.failures, m.evictions, m.waits, m.calls, m.modelRequests, m.modelSeconds, m.tokens,
		loadCollector{load}, sendCollector{m}, spendCollector{m}, scheduleCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the registry.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *metrics) ProcessStarted(server string) { m.starts.WithLabelValues(server).Inc() }
func (m *metrics) StartFailed(server string)    { m.failures.WithLabelValues(server).Inc() }
func (m *metrics) Evicted(server string)        { m.evictions.WithLabelValues(server).Inc() }

func (m *metrics) Waited(server string, d time.Duration) {
	m.waits.WithLabelValues(server).Observe(d.Seconds())
}

func (m *metrics) CallDone(server string, d time.Duration, outcome mcpclient.CallOutcome) {
	m.calls.WithLabelValues(server, string(outcome)).Observe(d.Seconds())
}

func outcome(failed bool) string {
	if failed {
		return "error"
	}
	return "ok"
}

// model wraps a model so that its requests and tokens are counted.
func (m *metrics) model(inner llm.Model) llm.Model { return observedModel{inner, m} }

type observedModel struct {
	llm.Model
	m *metrics
}

func (o observedModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := o.Model.Complete(ctx, req)
	o.m.modelSeconds.Observe(time.Since(start).Seconds())
	o.m.modelRequests.WithLabelValues(outcome(err != nil)).Inc()
	// A failed request counts too: what it cost all the same (llm.Model).
	o.m.tokens.WithLabelValues("input").Add(float64(resp.Usage.InputTokens))
	o.m.tokens.WithLabelValues("cached").Add(float64(resp.Usage.CacheReadTokens))
	o.m.tokens.WithLabelValues("output").Add(float64(resp.Usage.OutputTokens))
	o.m.tokens.WithLabelValues("estimated").Add(float64(resp.Usage.Estimated))
	return resp, err
}

// loadCollector reads the servers' live processes, the chats waiting and
// the memory of the process trees at each scrape.
type loadCollector struct{ load func() []mcpclient.ServerLoad }

var (
	liveDesc = prometheus.NewDesc("volcanicbot_mcp_live_processes",
		"Live processes (or connections) of an MCP server, across chats.", []string{"server"}, nil)
	waitingDesc = prometheus.NewDesc("volcanicbot_mcp_waiting_chats",
		"Chats waiting for a slot under the server's ceiling (maxLive).", []string{"server"}, nil)
	memoryDesc = prometheus.NewDesc("volcanicbot_mcp_memory_bytes",
		"Memory (PSS) of an MCP server's live process trees, across chats: a browser's Chromium included.", []string{"server"}, nil)
)

func (loadCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- liveDesc
	ch <- waitingDesc
	ch <- memoryDesc
}

func (c loadCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.load() {
		ch <- prometheus.MustNewConstMetric(liveDesc, prometheus.GaugeValue, float64(l.Live), l.Server)
		ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(l.Waiting), l.Server)
		ch <- prometheus.MustNewConstMetric(memoryDesc, prometheus.GaugeValue, float64(l.Memory), l.Server)
	}
}

var (
	callsDesc = prometheus.NewDesc("volcanicbot_telegram_calls_total",
		"Bot API calls made to chats: paced (they send or change a message, under the flood limits) or not.", []string{"kind"}, nil)
	tooManyDesc = prometheus.NewDesc("volcanicbot_telegram_too_many_total",
		"Bot API calls to chats that Telegram answered with a 429.", nil, nil)
	coalescedDesc = prometheus.NewDesc("volcanicbot_telegram_coalesced_total",
		"Queued updates of a live message (a streamed answer, the progress) replaced by a newer one before they were sent.", nil, nil)
)

// sendCollector reads the bot's sender at each scrape.
type sendCollector struct{ m *metrics }

func (sendCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- callsDesc
	ch <- tooManyDesc
	ch <- coalescedDesc
}

func (c sendCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.sendStats.Load()
	if f == nil {
		return
	}
	st := (*f)()
	ch <- prometheus.MustNewConstMetric(callsDesc, prometheus.CounterValue, float64(st.Paced), "paced")
	ch <- prometheus.MustNewConstMetric(callsDesc, prometheus.CounterValue, float64(st.Unpaced), "unpaced")
	ch <- prometheus.MustNewConstMetric(tooManyDesc, prometheus.CounterValue, float64(st.TooMany))
	ch <- prometheus.MustNewConstMetric(coalescedDesc, prometheus.CounterValue, float64(st.Coalesced))
}

// spendSource is the usage ledger's counts, and the provider the cost is
// labelled with.
type spendSource struct {
	stats    func() spend.Stats
	provider string
}

var (
	// The cost is labelled by provider and model, not by chat: a process
	// has one provider and the few models LLM_MODELS offers (a restart
	// with others starts series of their own), where chats are unbounded — every chat a series for good —
	// and a private chat's id is its user's Telegram id, which does not
	// belong in a monitoring system. Per chat, /usage and the journal say it.
	costDesc = prometheus.NewDesc("volcanicbot_model_cost_dollars_total",
		"What each model cost at its price (LLM_PRICES, LLM_PRICE_*_PER_MTOK; cached input tokens at the cached price), in dollars; only models with a price. "+
			"Requests that ended early count with their estimate (volcanicbot_model_tokens_total{kind=\"estimated\"}).",
		[]string{"provider", "model"}, nil)
	reachedDesc = prometheus.NewDesc("volcanicbot_allowance_reached_total",
		"Daily token allowances used up: a chat's (scope chat), or a user's (scope user); each told once a day.", []string{"scope"}, nil)
)

// spendCollector reads the ledger at each scrape.
type spendCollector struct{ m *metrics }

func (spendCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- costDesc
	ch <- reachedDesc
}

func (c spendCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.spend.Load()
	if src == nil {
		return
	}
	st := src.stats()
	for model, ms := range st.Models {
		if ms.Priced {
			ch <- prometheus.MustNewConstMetric(costDesc, prometheus.CounterValue, ms.Cost, src.provider, model)
		}
	}
	ch <- prometheus.MustNewConstMetric(reachedDesc, prometheus.CounterValue, float64(st.ReachedChat), "chat")
	ch <- prometheus.MustNewConstMetric(reachedDesc, prometheus.CounterValue, float64(st.ReachedUser), "user")
}
