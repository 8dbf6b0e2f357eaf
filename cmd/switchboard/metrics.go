package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"switchboard/engine"
	"switchboard/providers/peer"
)

// metrics holds the Prometheus series (docs/operations.md, "Metrics"). No label holds a recipient, a peer id
// or message content: routes are patterns, providers are package ids.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	attempts  *prometheus.CounterVec
	sendTime  *prometheus.HistogramVec
	callbacks *prometheus.CounterVec
	scripts   *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	inbox     *prometheus.CounterVec
	// peerSends, pooledStreams, streamResets and fallbacks are the peer providers' transport.
	peerSends     *prometheus.CounterVec
	pooledStreams *prometheus.GaugeVec
	streamResets  *prometheus.CounterVec
	fallbacks     *prometheus.CounterVec
	retention     *prometheus.CounterVec
	events        *prometheus.CounterVec
	eventLag      *prometheus.HistogramVec
	build         *prometheus.GaugeVec
	swept         prometheus.Gauge
	accepted      prometheus.Counter
	// verifications, chainsBroken and verifiedAt are the journal verifications serve ran.
	verifications *prometheus.CounterVec
	chainsBroken  prometheus.Gauge
	verifiedAt    prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_http_requests_total",
			Help: "API requests by route pattern and status class."}, []string{"route", "class"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchboard_http_request_duration_seconds",
			Help: "API request latency by route pattern.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}, []string{"route"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_provider_attempts_total",
			Help: "Delivery attempts by provider and outcome class."}, []string{"provider", "outcome"}),
		sendTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchboard_provider_send_duration_seconds",
			Help: "Time spent in a provider's Send.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"provider"}),
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_callbacks_total",
			Help: "Provider callbacks by provider and outcome."}, []string{"provider", "outcome"}),
		scripts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_script_failures_total",
			Help: "Adapter script failures by provider and failure class."}, []string{"provider", "class"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_limit_refusals_total",
			Help: "Requests refused by a rate limit or a daily quota."}, []string{"code"}),
		inbox: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_inbox_refusals_total",
			Help: "Envelopes a peer provider's inbox refused, by provider and code (peer.not-allowed, peer.over-quota)."},
			[]string{"provider", "code"}),
		peerSends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_peer_sends_total",
			Help: "Envelopes a peer provider sent, by provider and protocol (one-shot, pooled)."}, []string{"provider", "protocol"}),
		pooledStreams: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "switchboard_peer_pooled_streams",
			Help: "Pooled streams a peer provider holds open to other peers."}, []string{"provider"}),
		streamResets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_peer_stream_resets_total",
			Help: "Pooled streams that broke, failing their requests as transient."}, []string{"provider"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_peer_fallbacks_total",
			Help: "Peers asked for the pooled protocol that chose the one-shot one."}, []string{"provider"}),
		retention: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_retention_erased_total",
			Help: "Records erased by retention sweeps, by kind (payloads, records, submission receipts, …)."}, []string{"kind"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_webhook_deliveries_total",
			Help: "Event delivery attempts by endpoint and outcome (delivered, retry, failed)."}, []string{"endpoint", "outcome"}),
		eventLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchboard_webhook_delivery_lag_seconds",
			Help:    "Time from a change being written to its event being delivered, by endpoint.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 18)}, []string{"endpoint"}),
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "switchboard_build_info",
			Help: "Always 1; the labels say which build answers (as switchboard version prints it)."},
			[]string{"version", "revision", "goversion"}),
		accepted: prometheus.NewCounter(prometheus.CounterOpts{Name: "switchboard_messages_accepted_total",
			Help: "Messages this instance accepted (made durable and answered 202; a replay of a key is not counted)."}),
		swept: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchboard_retention_last_sweep_timestamp_seconds",
			Help: "Unix time at which this instance's last retention sweep went through every kind (0 before one has)."}),
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchboard_audit_verifications_total",
			Help: "Journal verifications this instance ran, by result (intact, broken, unreadable)."}, []string{"result"}),
		chainsBroken: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchboard_audit_chains_broken",
			Help: "Journal chains the last verification this instance finished found broken."}),
		verifiedAt: prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchboard_audit_last_verification_timestamp_seconds",
			Help: "Unix time of the last verification this instance read the whole journal for (0 before one has)."}),
	}
	v := currentVersion()
	m.build.WithLabelValues(v.Version, v.Revision, v.Go).Set(1)
	for _, r := range []string{"intact", "broken", "unreadable"} {
		m.verifications.WithLabelValues(r) // at 0 from the start, so that the first one counts as an increase
	}
	m.reg.MustRegister(append(m.own(), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))...)
	return m
}

// own are the registry's series of this program, besides the Go runtime's and the process's
// (docs/operations.md, "Metrics" lists each, with the queue gauges read at scrape time).
func (m *metrics) own() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.latency, m.attempts, m.sendTime, m.callbacks, m.scripts,
		m.refusals, m.inbox, m.peerSends, m.pooledStreams, m.streamResets, m.fallbacks, m.retention, m.events, m.eventLag, m.build, m.accepted, m.swept, m.verifications, m.chainsBroken, m.verifiedAt}
}

// observeRequest counts an answered API request.
func (m *metrics) observeRequest(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status/100)+"xx").Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
	if status == http.StatusTooManyRequests {
		m.refusals.WithLabelValues("429").Inc()
	}
}

// observeAttempt counts a finished attempt.
func (m *metrics) observeAttempt(provider string, class engine.OutcomeClass, d time.Duration) {
	m.attempts.WithLabelValues(provider, string(class)).Inc()
	m.sendTime.WithLabelValues(provider).Observe(d.Seconds())
}

// observeProvider counts what a provider reports: adapter script failures by class, and
// callbacks by outcome (unverified, unreadable, ignored, parsed).
func (m *metrics) observeProvider(provider, event, class string) {
	if class == "" {
		class = "ok"
	}
	if event == "callback" {
		m.callbacks.WithLabelValues(provider, class).Inc()
		return
	}
	m.scripts.WithLabelValues(provider, class).Inc()
}

// observeInboxRefusal counts an envelope a peer provider's inbox refused. The sender's peer id
// is never a label.
func (m *metrics) observeInboxRefusal(provider, code string) {
	m.inbox.WithLabelValues(provider, code).Inc()
}

// observePeerTransport counts what a peer provider's transport did.
func (m *metrics) observePeerTransport(provider string, ev peer.TransportEvent) {
	switch ev {
	case peer.EventSendOneShot:
		m.peerSends.WithLabelValues(provider, "one-shot").Inc()
	case peer.EventSendPooled:
		m.peerSends.WithLabelValues(provider, "pooled").Inc()
	case peer.EventStreamOpened:
		m.pooledStreams.WithLabelValues(provider).Inc()
	case peer.EventStreamClosed:
		m.pooledStreams.WithLabelValues(provider).Dec()
	case peer.EventStreamReset:
		m.streamResets.WithLabelValues(provider).Inc()
	case peer.EventFallback:
		m.fallbacks.WithLabelValues(provider).Inc()
	}
}

// observeEvent counts an event delivery attempt, and the lag of a delivered one.
func (m *metrics) observeEvent(endpoint, outcome string, lag time.Duration) {
	m.events.WithLabelValues(endpoint, outcome).Inc()
	if outcome == "delivered" {
		m.eventLag.WithLabelValues(endpoint).Observe(lag.Seconds())
	}
}

// observeErasure counts what one retention batch erased.
func (m *metrics) observeErasure(kind engine.EraseKind, erased int) {
	m.retention.WithLabelValues(string(kind)).Add(float64(erased))
}

// observeSweep records a retention sweep that went through every kind.
func (m *metrics) observeSweep(at time.Time) {
	m.swept.Set(float64(at.Unix()))
}

// observeJournal records a verification of the journal that ended at at: err is a failure to
// read it to the end, broken the number of chains that do not hold.
func (m *metrics) observeJournal(at time.Time, broken int, err error) {
	switch {
	case err != nil:
		m.verifications.WithLabelValues("unreadable").Inc()
		return
	case broken > 0:
		m.verifications.WithLabelValues("broken").Inc()
	default:
		m.verifications.WithLabelValues("intact").Inc()
	}
	m.chainsBroken.Set(float64(broken))
	m.verifiedAt.Set(float64(at.Unix()))
}

// handler serves /metrics, with the queue gauges read from the store at scrape time.
func (m *metrics) handler(s *stack) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newQueueCollector(s))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{m.reg, reg}, promhttp.HandlerOpts{}))
	return mux
}

// queueCollector reads the dispatch queue gauges from metadata at scrape time.
type queueCollector struct {
	s                                                         *stack
	entries, bytes, oldestDue, oversized, held, lost, giveWay *prometheus.Desc
	transactions, requests, reruns, merged                    *prometheus.Desc
	pendingEvents                                             *prometheus.Desc
}

func newQueueCollector(s *stack) *queueCollector {
	return &queueCollector{s: s,
		entries:   prometheus.NewDesc("switchboard_queue_entries", "Messages by dispatch state.", []string{"dispatch"}, nil),
		bytes:     prometheus.NewDesc("switchboard_queue_bytes", "Rendered payload bytes queued or claimed.", []string{"state"}, nil),
		oldestDue: prometheus.NewDesc("switchboard_queue_oldest_due_age_seconds", "Age of the oldest due queued message.", nil, nil),
		oversized: prometheus.NewDesc("switchboard_queue_oversized_skips_total", "Due messages skipped because they exceed maxPayloadBytes.", nil, nil),
		held:      prometheus.NewDesc("switchboard_dispatch_claims_held", "Claims this process holds (sending under its leases).", nil, nil),
		lost:      prometheus.NewDesc("switchboard_dispatch_leases_lost_total", "Outcomes not recorded because the claim's lease was lost (another process recovered it).", nil, nil),
		giveWay:   prometheus.NewDesc("switchboard_dispatch_give_way_seconds_total", "Time the dispatcher held a single claim to give the CPU to a burst of submissions.", nil, nil),
		transactions: prometheus.NewDesc("switchboard_store_transactions_total",
			"Write transactions of the store's group-commit writers.", nil, nil),
		requests: prometheus.NewDesc("switchboard_store_requests_total",
			"Write requests those transactions carried (requests / transactions is the mean batch).", nil, nil),
		reruns: prometheus.NewDesc("switchboard_store_reruns_total",
			"Write transactions rolled back and run again one statement at a time (a request failed in a way that may have written, or a pipelined finish did not hold).", nil, nil),
		merged: prometheus.NewDesc("switchboard_store_merged_statements_total",
			"Pipelined finishes and receipts that ran as rows of a multi-row statement (PostgreSQL), not one statement each.", nil, nil),
		pendingEvents: prometheus.NewDesc("switchboard_webhook_events_pending", "Undelivered events by endpoint (one per message and endpoint at most).",
			[]string{"endpoint"}, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.entries
	ch <- c.bytes
	ch <- c.oldestDue
	ch <- c.oversized
	ch <- c.held
	ch <- c.lost
	ch <- c.giveWay
	ch <- c.transactions
	ch <- c.reruns
	ch <- c.merged
	ch <- c.requests
	ch <- c.pendingEvents
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.s.store.Stats(ctx, c.s.clock.Now())
	if err != nil {
		return
	}
	for _, d := range engine.DispatchStates() {
		ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(st.Dispatch[d]), string(d))
	}
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(st.QueuedBytes), "queued")
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(st.ClaimedBytes), "claimed")
	ch <- prometheus.MustNewConstMetric(c.oldestDue, prometheus.GaugeValue, st.OldestDueAge.Seconds())
	fig := c.s.dispatcher.Figures()
	ch <- prometheus.MustNewConstMetric(c.oversized, prometheus.CounterValue, float64(fig.OversizedSkipsTotal))
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(fig.ClaimedHeld))
	ch <- prometheus.MustNewConstMetric(c.lost, prometheus.CounterValue, float64(fig.LeaseLostTotal))
	ch <- prometheus.MustNewConstMetric(c.giveWay, prometheus.CounterValue, fig.GivenWay.Seconds())
	ws := c.s.store.WriterStats()
	ch <- prometheus.MustNewConstMetric(c.transactions, prometheus.CounterValue, float64(ws.Batches))
	ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(ws.Requests))
	ch <- prometheus.MustNewConstMetric(c.reruns, prometheus.CounterValue, float64(ws.Reruns))
	ch <- prometheus.MustNewConstMetric(c.merged, prometheus.CounterValue, float64(ws.Merged))
	if len(c.s.rt.Webhooks) == 0 {
		return
	}
	pending, err := c.s.store.PendingEvents(ctx)
	if err != nil {
		return
	}
	for _, w := range c.s.rt.Webhooks {
		ch <- prometheus.MustNewConstMetric(c.pendingEvents, prometheus.GaugeValue, float64(pending[w.ID]), w.ID)
	}
}
