/*
Package telemetry is powercontext's observability (docs/architecture.md#privacy): Prometheus metrics with bounded labels, OpenTelemetry
spans for the ledger and the HTTP API, and the hooks that feed them from the coordinator, the provider and Echo.

# Privacy

Source content, prompts, model output, credentials and error text never enter a metric, a span or a log line
written here. Every label and span attribute value is drawn from a bounded set computed by this package (unknown
values map to "other"); errors are described by coordinator.ErrorClass or the bounded (category, code) pair, never by
err.Error(). No label or attribute carries a scope, principal, work id or raw request path.

# Metrics (namespace powercontext) and their label sets

	work_enqueues_total{kind, outcome}                  outcome: created | joined
	work_claim_latency_seconds{kind}                    histogram: available_at → claimed, on database time
	work_claim_pass_duration_seconds                    histogram: one claim pass of a worker
	work_attempts_total{kind, outcome, error_category}  outcome: succeeded | retry_wait | snoozed | failed |
	                                                    cancelled | abandoned | stale | error
	work_attempt_duration_seconds{kind, outcome}        histogram, same outcomes
	work_lease_expirations_total{kind, outcome}         outcome: lease_expired_retry | lease_expired_failed | cancelled
	work_queue_depth{kind, status}                      gauges refreshed by the scheduler leader from the database;
	work_queue_oldest_age_seconds{kind, status}         status: queued | running | retry_wait | cancelling | failed
	scheduler_leadership_changes_total{outcome}         outcome: acquired | lost | reacquired
	scheduler_leader                                    1 while this process holds the work-discovery lease
	runtime_members{role}                               live members; role: all | api | scheduler | worker
	skill_publications{state}                           gauge refreshed by the scheduler leader from the database: skill
	                                                    publications of every scope by state, counts only; state:
	                                                    pending | current | update_available | delivery_failed |
	                                                    conflict | drifted | incompatible (each reported, 0 when empty)
	http_requests_total{route, method, status_class}    route: a registered route template or "unmatched";
	http_request_duration_seconds{…same}                method: GET HEAD POST PUT PATCH DELETE OPTIONS;
	                                                    status_class: 1xx … 5xx
	provider_calls_total{provider, outcome}             provider: local | openai; outcome: ok | rate_limited |
	provider_call_duration_seconds{provider, outcome}   unavailable | invalid_output | request_rejected | canceled |
	                                                    error

kind is one of the work kinds the process is built with (Config.Kinds: app hands in the kinds each domain package
declares with its WorkKinds, so this package imports none of them; KindLabels is the set); error_category is
"none" or a docs/protocol.md#errors category (internal, payload, conflict, retention, configuration, provider) or lease or
cancellation; state is one of the publication states the process is built with (Config.PublicationStates: app
hands in skills.States, the values pc_skill_publications allows), and a state outside them is not reported. Any
other value outside its set is reported as "other". Go runtime and process collectors are registered too.

# Spans

scheduler.tick (one per tick), work.enqueue (child of the HTTP request or tick that enqueued), work.claim (a claim
pass that claimed or expired something, linked to the executions it started), work.execute, work.commit (Complete's
final transaction), provider.extract_memory, provider.incubate_experience and provider.embed (an OpenAI-compatible
embeddings call, counted in the provider metrics too), and one server span per HTTP request (but /health/* and
/metrics).

work.execute is a new root per attempt. Its trace and span ids are the ones stored on the attempt row: NewTrace
draws them when the claim transaction inserts the row, the claim carries them back, and StartAttempt starts the span
with exactly those ids through this package's IDGenerator, which returns ids planted in the context for a new root
span (and random ids otherwise). A retry's work.execute carries a span link to the previous attempt's stored ids, so
retries are linked, not faked as one trace.

# Exporter

Tracing is off unless OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and OTEL_SDK_DISABLED is not true; the OTLP/HTTP exporter reads every
other OTEL_EXPORTER_OTLP_* variable, and OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES apply.
When it is off, spans are still created with valid ids (so attempt rows and logs correlate) but never sampled or
exported. Tests pass Config.SpanExporter (for example tracetest.NewInMemoryExporter) to receive every span.
*/
package telemetry
