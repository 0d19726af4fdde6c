package telemetry

import (
	"context"

	"github.com/powercontext/powercontext/provider"
)

// WrapEmbedder returns e with every call counted like a provider call (provider_calls_total,
// provider_call_duration_seconds under e's provider label) and traced as provider.embed. Texts, vectors and error
// text are never recorded: only the provider's name and the bounded outcome.
func (t *Telemetry) WrapEmbedder(e provider.Embedder) provider.Embedder {
	return &observedEmbedder{next: e, obs: observedProvider{t: t, name: providerLabel(e.Name())}}
}

type observedEmbedder struct {
	next provider.Embedder
	obs  observedProvider
}

// Name implements provider.Embedder (the wrapped embedder's label).
func (o *observedEmbedder) Name() string { return o.next.Name() }

// Model implements provider.Embedder (the wrapped embedder's space).
func (o *observedEmbedder) Model() string { return o.next.Model() }

// Embed implements provider.Embedder.
func (o *observedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, end := o.obs.start(ctx, "provider.embed")
	vs, err := o.next.Embed(ctx, texts)
	end(err)
	return vs, err
}
