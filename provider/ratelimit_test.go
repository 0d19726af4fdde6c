package provider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/errclass"
)

type countingProvider struct {
	Local
	calls int
}

func (c *countingProvider) ExtractMemory(ctx context.Context, req ExtractMemoryRequest) (ExtractMemoryResponse, error) {
	c.calls++
	return c.Local.ExtractMemory(ctx, req)
}

func (c *countingProvider) IncubateExperience(ctx context.Context, req IncubateRequest) (IncubateResponse, error) {
	c.calls++
	return c.Local.IncubateExperience(ctx, req)
}

func TestWithRateLimit(t *testing.T) {
	inner := &countingProvider{}
	allowed, retryAfter, limiterErr := true, time.Duration(0), error(nil)
	p := WithRateLimit(inner, func(context.Context) (bool, time.Duration, error) { return allowed, retryAfter, limiterErr })
	require.Equal(t, "local", p.Name())

	resp, err := p.ExtractMemory(context.Background(), ExtractMemoryRequest{Window: []Source{{Position: 1, Content: "A useful fact."}}})
	require.NoError(t, err)
	require.Len(t, resp.Ops, 1)
	require.Equal(t, 1, inner.calls)

	allowed, retryAfter = false, 3*time.Second
	_, err = p.ExtractMemory(context.Background(), ExtractMemoryRequest{})
	requireFailure(t, err, errclass.CodeRateLimited)
	d, ok := RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, 3*time.Second, d)
	_, err = p.IncubateExperience(context.Background(), IncubateRequest{})
	requireFailure(t, err, errclass.CodeRateLimited)

	retryAfter = 0
	_, err = p.IncubateExperience(context.Background(), IncubateRequest{})
	requireFailure(t, err, errclass.CodeRateLimited)
	_, ok = RetryAfter(err)
	require.False(t, ok)

	limiterErr = errors.New("limiter database said something secret")
	_, err = p.ExtractMemory(context.Background(), ExtractMemoryRequest{})
	requireFailure(t, err, errclass.CodeUnavailable)
	require.NotContains(t, err.Error(), "secret")
	require.Equal(t, 1, inner.calls, "denied calls never reach the provider")

	require.Same(t, Provider(inner), WithRateLimit(inner, nil))
}
