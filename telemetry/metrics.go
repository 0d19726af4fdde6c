package telemetry

import "github.com/prometheus/client_golang/prometheus"

const namespace = "powercontext"

type metrics struct {
	enqueues         *prometheus.CounterVec
	claimLatency     *prometheus.HistogramVec
	claimPass        prometheus.Histogram
	attempts         *prometheus.CounterVec
	attemptDuration  *prometheus.HistogramVec
	leaseExpirations *prometheus.CounterVec
	leadership       *prometheus.CounterVec
	leader           prometheus.Gauge
	queueDepth       *prometheus.GaugeVec
	queueOldest      *prometheus.GaugeVec
	members          *prometheus.GaugeVec
	skillPubs        *prometheus.GaugeVec
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	providerCalls    *prometheus.CounterVec
	providerDuration *prometheus.HistogramVec
}

// collectors are every metric of m, in registration order.
func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.enqueues, m.claimLatency, m.claimPass, m.attempts, m.attemptDuration,
		m.leaseExpirations, m.leadership, m.leader, m.queueDepth, m.queueOldest, m.members, m.skillPubs,
		m.httpRequests, m.httpDuration, m.providerCalls, m.providerDuration}
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		enqueues: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "work_enqueues_total",
			Help: "Work enqueues that created a new item or joined the live item of the same logical window."},
			[]string{"kind", "outcome"}),
		claimLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "work_claim_latency_seconds",
			Help:    "Time from an item becoming available to a worker claiming it (database time).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 18)}, []string{"kind"}),
		claimPass: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "work_claim_pass_duration_seconds",
			Help: "Duration of one worker claim pass.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "work_attempts_total",
			Help: "Finished work attempts by outcome and error category."}, []string{"kind", "outcome", "error_category"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "work_attempt_duration_seconds",
			Help: "Duration of a work attempt from claim to its final write.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)},
			[]string{"kind", "outcome"}),
		leaseExpirations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "work_lease_expirations_total",
			Help: "Expired work leases recovered by claim passes, by the old attempt's outcome."}, []string{"kind", "outcome"}),
		leadership: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "scheduler_leadership_changes_total",
			Help: "Scheduler leadership changes of this process."}, []string{"outcome"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "scheduler_leader",
			Help: "1 while this process holds the work-discovery lease."}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "work_queue_depth",
			Help: "Work items by kind and status (reported by the scheduler leader)."}, []string{"kind", "status"}),
		queueOldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "work_queue_oldest_age_seconds",
			Help: "Age of the oldest work item by kind and status (reported by the scheduler leader)."}, []string{"kind", "status"}),
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "runtime_members",
			Help: "Live runtime members by role."}, []string{"role"}),
		skillPubs: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "skill_publications",
			Help: "Skill publications of every scope by state (reported by the scheduler leader; counts only)."}, []string{"state"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests by route template, method and status class."}, []string{"route", "method", "status_class"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "http_request_duration_seconds",
			Help: "HTTP request latency by route template, method and status class.", Buckets: prometheus.DefBuckets},
			[]string{"route", "method", "status_class"}),
		providerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "provider_calls_total",
			Help: "Model provider calls by provider and outcome."}, []string{"provider", "outcome"}),
		providerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "provider_call_duration_seconds",
			Help: "Model provider call latency.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 15)}, []string{"provider", "outcome"}),
	}
	reg.MustRegister(m.collectors()...)
	for _, o := range LeadershipOutcomes {
		m.leadership.WithLabelValues(o)
	}
	return m
}
