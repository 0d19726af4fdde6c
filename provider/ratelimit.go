package provider

import (
	"context"
	"time"
)

// AllowFunc asks a shared limiter whether one provider call may proceed now.
type AllowFunc func(ctx context.Context) (allowed bool, retryAfter time.Duration, err error)

type limitedProvider struct {
	next  Provider
	allow AllowFunc
}

// WithRateLimit returns p with every call gated by allow (a limiter shared across replicas, docs/protocol.md#rate-limit). A denied
// call fails with provider/rate_limited (retryable, with the limiter's retry hint as a *RetryAfterError); a
// limiter error fails with provider/unavailable (retryable). A nil allow returns p unchanged.
func WithRateLimit(p Provider, allow func(ctx context.Context) (allowed bool, retryAfter time.Duration, err error)) Provider {
	if allow == nil {
		return p
	}
	return &limitedProvider{next: p, allow: allow}
}

// Name implements Provider (the wrapped provider's label).
func (r *limitedProvider) Name() string { return r.next.Name() }

func (r *limitedProvider) admit(ctx context.Context) error {
	allowed, retryAfter, err := r.allow(ctx)
	if err != nil {
		return errUnavailable()
	}
	if !allowed {
		return rateLimitedErr(retryAfter)
	}
	return nil
}

// ExtractMemory implements Provider.
func (r *limitedProvider) ExtractMemory(ctx context.Context, req ExtractMemoryRequest) (ExtractMemoryResponse, error) {
	if err := r.admit(ctx); err != nil {
		return ExtractMemoryResponse{}, err
	}
	return r.next.ExtractMemory(ctx, req)
}

// IncubateExperience implements Provider.
func (r *limitedProvider) IncubateExperience(ctx context.Context, req IncubateRequest) (IncubateResponse, error) {
	if err := r.admit(ctx); err != nil {
		return IncubateResponse{}, err
	}
	return r.next.IncubateExperience(ctx, req)
}
