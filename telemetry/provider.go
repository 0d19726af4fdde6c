package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/powercontext/powercontext/provider"
)

const (
	attrProvider        = attribute.Key("provider.name")
	attrProviderOutcome = attribute.Key("provider.outcome")
)

// WrapProvider returns p with every call counted (provider_calls_total, provider_call_duration_seconds) and traced
// (provider.extract_memory, provider.incubate_experience). Requests, responses and error text are never recorded:
// only the provider's name and the bounded outcome.
func (t *Telemetry) WrapProvider(p provider.Provider) provider.Provider {
	return &observedProvider{next: p, t: t, name: providerLabel(p.Name())}
}

type observedProvider struct {
	next provider.Provider
	t    *Telemetry
	name string
}

// Name implements provider.Provider (the wrapped provider's label).
func (o *observedProvider) Name() string { return o.next.Name() }

func (o *observedProvider) start(ctx context.Context, span string) (context.Context, func(error)) {
	ctx, s := o.t.tracer.Start(ctx, span, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrProvider.String(o.name)))
	begin := time.Now()
	return ctx, func(err error) {
		outcome := providerOutcome(err)
		o.t.m.providerCalls.WithLabelValues(o.name, outcome).Inc()
		o.t.m.providerDuration.WithLabelValues(o.name, outcome).Observe(time.Since(begin).Seconds())
		if outcome != ProviderCanceled {
			o.t.providerState.Store(outcome)
		}
		s.SetAttributes(attrProviderOutcome.String(outcome))
		if err != nil {
			s.SetStatus(codes.Error, outcome)
		}
		s.End()
	}
}

// ExtractMemory implements provider.Provider.
func (o *observedProvider) ExtractMemory(ctx context.Context, req provider.ExtractMemoryRequest) (provider.ExtractMemoryResponse, error) {
	ctx, end := o.start(ctx, "provider.extract_memory")
	resp, err := o.next.ExtractMemory(ctx, req)
	end(err)
	return resp, err
}

// IncubateExperience implements provider.Provider.
func (o *observedProvider) IncubateExperience(ctx context.Context, req provider.IncubateRequest) (provider.IncubateResponse, error) {
	ctx, end := o.start(ctx, "provider.incubate_experience")
	resp, err := o.next.IncubateExperience(ctx, req)
	end(err)
	return resp, err
}
