package telemetry

import (
	"context"
	"errors"
	"github.com/powercontext/powercontext/internal/clock"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Span attribute keys (values are bounded: kinds, outcomes, categories, counts).
const (
	attrKind          = attribute.Key("work.kind")
	attrAttempt       = attribute.Key("work.attempt")
	attrOutcome       = attribute.Key("work.outcome")
	attrErrorCategory = attribute.Key("work.error_category")
	attrClaimed       = attribute.Key("work.claimed")
	attrExpired       = attribute.Key("work.expired")
	attrLeader        = attribute.Key("scheduler.leader")
	attrLinkType      = attribute.Key("link.type")
)

// LedgerHooks feed work.enqueue and work.commit spans and the enqueue counter.
func (t *Telemetry) LedgerHooks() coordinator.LedgerHooks {
	return coordinator.LedgerHooks{Enqueue: t.enqueue, Commit: t.commit}
}

func (t *Telemetry) enqueue(ctx context.Context) (context.Context, func(coordinator.EnqueueResult, error)) {
	ctx, span := t.tracer.Start(ctx, "work.enqueue")
	return ctx, func(res coordinator.EnqueueResult, err error) {
		defer span.End()
		if err != nil {
			span.SetAttributes(attrOutcome.String("error"))
			span.SetStatus(codes.Error, coordinator.ErrorClass(err))
			return
		}
		if res.Idle {
			span.SetAttributes(attrOutcome.String("idle"))
			return
		}
		outcome := EnqueueJoined
		if res.Created {
			outcome = EnqueueCreated
		}
		kind := t.kindLabel(res.Item.Kind)
		span.SetAttributes(attrKind.String(kind), attrOutcome.String(outcome))
		t.m.enqueues.WithLabelValues(kind, outcome).Inc()
	}
}

func (t *Telemetry) commit(ctx context.Context, c coordinator.Claim) (context.Context, func(error)) {
	ctx, span := t.tracer.Start(ctx, "work.commit",
		trace.WithAttributes(attrKind.String(t.kindLabel(c.Item.Kind)), attrAttempt.Int(int(c.AttemptNo))))
	return ctx, func(err error) {
		defer span.End()
		switch {
		case err == nil:
			span.SetAttributes(attrOutcome.String("committed"))
		case errors.Is(err, coordinator.ErrCancelRequested):
			span.SetAttributes(attrOutcome.String("cancel_requested"))
		case errors.Is(err, coordinator.ErrStaleWorkClaim):
			span.SetAttributes(attrOutcome.String(OutcomeStale))
			span.SetStatus(codes.Error, coordinator.ErrorClass(err))
		default:
			span.SetAttributes(attrOutcome.String(OutcomeError))
			span.SetStatus(codes.Error, coordinator.ErrorClass(err))
		}
	}
}

// WorkerHooks feed the claim, attempt and lease-expiration metrics and the work.claim and work.execute spans.
func (t *Telemetry) WorkerHooks() coordinator.WorkerHooks {
	return coordinator.WorkerHooks{ClaimPass: t.claimPass, NewTrace: NewTrace, StartAttempt: t.startAttempt,
		LeaseExpired: t.leaseExpired}
}

func (t *Telemetry) claimPass(d time.Duration, claimed []coordinator.Claim, expired int) {
	t.m.claimPass.Observe(d.Seconds())
	for _, c := range claimed {
		wait := c.Item.UpdatedAt.Sub(c.Item.AvailableAt) // claim time and availability, both database time
		t.m.claimLatency.WithLabelValues(t.kindLabel(c.Item.Kind)).Observe(max(wait, 0).Seconds())
	}
	if len(claimed) == 0 && expired == 0 {
		return // idle polls make no span
	}
	end := clock.Now() // span timestamps are wall-clock values
	links := make([]trace.Link, 0, len(claimed))
	for _, c := range claimed {
		if sc, ok := spanContextFromHex(c.TraceID, c.SpanID, false); ok {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrLinkType.String("claimed_attempt")}})
		}
	}
	_, span := t.tracer.Start(context.Background(), "work.claim", trace.WithTimestamp(end.Add(-d)), trace.WithLinks(links...),
		trace.WithAttributes(attrClaimed.Int(len(claimed)), attrExpired.Int(expired)))
	span.End(trace.WithTimestamp(end))
}

func (t *Telemetry) leaseExpired(e coordinator.LeaseExpiration) {
	t.m.leaseExpirations.WithLabelValues(t.kindLabel(e.Kind), leaseOutcomeLabel(e.Outcome)).Inc()
}

// startAttempt starts the attempt's work.execute span: a new root whose ids are the ones the claim stored on the
// attempt row, with a link to the previous attempt's stored span.
func (t *Telemetry) startAttempt(ctx context.Context, c coordinator.Claim) (context.Context, func(outcome, errorCategory string)) {
	kind := t.kindLabel(c.Item.Kind)
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attrKind.String(kind), attrAttempt.Int(int(c.AttemptNo)))}
	if prev, ok := spanContextFromHex(c.PreviousTraceID, c.PreviousSpanID, true); ok {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: prev,
			Attributes: []attribute.KeyValue{attrLinkType.String("previous_attempt")}}))
	}
	startCtx := ctx
	if own, ok := spanContextFromHex(c.TraceID, c.SpanID, false); ok {
		startCtx = withRootIDs(ctx, own.TraceID(), own.SpanID())
	}
	_, span := t.tracer.Start(startCtx, "work.execute", opts...)
	attemptCtx := trace.ContextWithSpan(ctx, span) // not startCtx: children must not inherit the planted ids
	start := time.Now()
	return attemptCtx, func(outcome, errorCategory string) {
		o, cat := attemptOutcomeLabel(outcome), errorCategoryLabel(errorCategory)
		t.m.attempts.WithLabelValues(kind, o, cat).Inc()
		t.m.attemptDuration.WithLabelValues(kind, o).Observe(time.Since(start).Seconds())
		span.SetAttributes(attrOutcome.String(o), attrErrorCategory.String(cat))
		switch o {
		case db.OutcomeSucceeded, db.OutcomeCancelled:
		default:
			span.SetStatus(codes.Error, cat)
		}
		span.End()
	}
}

// SchedulerHooks feed the leadership metrics, the scheduler.tick span and, while this process leads, the queue
// gauges and the skill-publication gauge (refreshed from the database at the end of every tick).
func (t *Telemetry) SchedulerHooks(ledger *coordinator.Ledger) coordinator.SchedulerHooks {
	return coordinator.SchedulerHooks{
		Leadership: func(event string, _ int64) { t.leadership(event) },
		Tick: func(ctx context.Context) (context.Context, func(error)) {
			ctx, span := t.tracer.Start(ctx, "scheduler.tick", trace.WithNewRoot())
			return ctx, func(err error) {
				defer span.End()
				leader := t.leader.Load()
				span.SetAttributes(attrLeader.Bool(leader))
				if err != nil {
					span.SetStatus(codes.Error, coordinator.ErrorClass(err))
				}
				if leader && ctx.Err() == nil && ledger != nil {
					if err := t.RefreshQueue(ctx, ledger); err != nil {
						t.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("queue statistics refresh failed")
					}
					if err := t.RefreshSkillPublications(ctx, ledger.Store()); err != nil {
						t.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("skill publication count refresh failed")
					}
				}
			}
		},
	}
}

func (t *Telemetry) leadership(event string) {
	switch event {
	case coordinator.LeadershipAcquired, coordinator.LeadershipReacquired:
		t.leader.Store(true)
		t.m.leader.Set(1)
	case coordinator.LeadershipLost:
		t.leader.Store(false)
		t.m.leader.Set(0)
		t.clearQueue()
	default:
		return
	}
	t.m.leadership.WithLabelValues(event).Inc()
}
