package app

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
)

// Embedding kinds (docs/memory.md#embeddings).
const (
	EmbeddingsLocal  = "local"
	EmbeddingsOpenAI = "openai"
	EmbeddingsNone   = "none"
)

// EmbeddingsMigration is the migration that creates pc_memory_embeddings.
const EmbeddingsMigration = "20261210000000"

// Embeddings configures entry and query embeddings: which embedder, how long a query may wait for its vector, what
// counts as a vector match, and how often the embedding discoverer scans for scopes to re-embed.
type Embeddings struct {
	EmbeddingsKind    string // local (default) | openai | none
	EmbeddingsBaseURL string // default: ProviderBaseURL
	EmbeddingsModel   string
	EmbeddingsAPIKey  string // default: ProviderAPIKey
	// EmbeddingsDimensions asks the model for vectors of this length (0 = the model's own).
	EmbeddingsDimensions int
	// EmbeddingsQueryTimeoutSeconds bounds the query embedding of one search or context request; past it the
	// request is answered by full-text ranking, marked degraded.
	EmbeddingsQueryTimeoutSeconds float64
	// EmbeddingsMinSimilarity is the least cosine similarity of a vector match (0 = the embedder's default).
	EmbeddingsMinSimilarity float64
	// EmbeddingsScanSeconds is the embedding discoverer's interval (0 = off).
	EmbeddingsScanSeconds float64
}

// DefaultEmbeddings returns the embedding defaults: the local embedder, a 2 s query budget, a scan every 5 minutes.
func DefaultEmbeddings() Embeddings {
	return Embeddings{EmbeddingsKind: EmbeddingsLocal, EmbeddingsQueryTimeoutSeconds: memory.DefaultQueryTimeout.Seconds(),
		EmbeddingsScanSeconds: 300}
}

func (c *Config) embeddingSettings() []setting {
	return []setting{
		{"embeddings-kind", "POWERCONTEXT_EMBEDDINGS_KIND", "entry and query embeddings: local (built-in, offline, default), openai (an OpenAI-compatible embeddings endpoint) or none (full-text search only)", &c.EmbeddingsKind},
		{"embeddings-base-url", "POWERCONTEXT_EMBEDDINGS_BASE_URL", "OpenAI-compatible base URL of the embeddings endpoint (embeddings openai; default: the provider base URL)", &c.EmbeddingsBaseURL},
		{"embeddings-model", "POWERCONTEXT_EMBEDDINGS_MODEL", "embedding model name (embeddings openai); changing it re-embeds every scope", &c.EmbeddingsModel},
		{"embeddings-api-key", "POWERCONTEXT_EMBEDDINGS_API_KEY", "API key of the embeddings endpoint (embeddings openai; default: the provider API key; prefer the environment variable)", &c.EmbeddingsAPIKey},
		{"embeddings-dimensions", "POWERCONTEXT_EMBEDDINGS_DIMENSIONS", "vector length asked of the model (embeddings openai; 0 = the model's own, else 1..8192)", &c.EmbeddingsDimensions},
		{"embeddings-query-timeout-seconds", "POWERCONTEXT_EMBEDDINGS_QUERY_TIMEOUT_SECONDS", "time a search or context request waits for its query's vector before it answers with full-text ranking, marked degraded", &c.EmbeddingsQueryTimeoutSeconds},
		{"embeddings-min-similarity", "POWERCONTEXT_EMBEDDINGS_MIN_SIMILARITY", "least cosine similarity of a vector match (0 = the embedder's default: 0.18 local, 0.3 openai)", &c.EmbeddingsMinSimilarity},
		{"embeddings-scan-seconds", "POWERCONTEXT_EMBEDDINGS_SCAN_SECONDS", "interval of the scan for scopes whose latest revision lacks vectors of the configured model (0 = off)", &c.EmbeddingsScanSeconds},
	}
}

// validateEmbeddings refuses an unusable embeddings configuration.
func (c *Config) validateEmbeddings() error {
	switch c.EmbeddingsKind {
	case "", EmbeddingsLocal, EmbeddingsNone:
	case EmbeddingsOpenAI:
		base := c.embeddingsBaseURL()
		if u, err := url.Parse(base); base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return refuse("embeddings openai needs an http(s) POWERCONTEXT_EMBEDDINGS_BASE_URL (or POWERCONTEXT_PROVIDER_BASE_URL)")
		}
		if m := strings.TrimSpace(c.EmbeddingsModel); m == "" || len(m) > 100 {
			return refuse("embeddings openai needs POWERCONTEXT_EMBEDDINGS_MODEL (at most 100 bytes)")
		}
	default:
		return refuse("unknown embeddings kind %q: use local, openai or none", c.EmbeddingsKind)
	}
	switch {
	case c.EmbeddingsDimensions < 0 || c.EmbeddingsDimensions > provider.MaxEmbeddingDimensions:
		return refuse("POWERCONTEXT_EMBEDDINGS_DIMENSIONS must be 0 (the model's own) or 1..%d", provider.MaxEmbeddingDimensions)
	case c.EmbeddingsQueryTimeoutSeconds <= 0 || c.EmbeddingsQueryTimeoutSeconds > 30:
		return refuse("POWERCONTEXT_EMBEDDINGS_QUERY_TIMEOUT_SECONDS must be > 0 and at most 30")
	case c.EmbeddingsMinSimilarity < 0 || c.EmbeddingsMinSimilarity >= 1:
		return refuse("POWERCONTEXT_EMBEDDINGS_MIN_SIMILARITY must be >= 0 and < 1 (0 = the embedder's default)")
	case c.EmbeddingsScanSeconds < 0:
		return refuse("POWERCONTEXT_EMBEDDINGS_SCAN_SECONDS must be >= 0 (0 = off)")
	}
	return nil
}

func (c *Config) embeddingsBaseURL() string {
	if c.EmbeddingsBaseURL != "" {
		return c.EmbeddingsBaseURL
	}
	return c.ProviderBaseURL
}

// embedder builds the configured embedder (nil for none): the local one, or an OpenAI-compatible client with the
// provider's timeout, observed by telemetry and gated by the shared provider rate limiter when it is enabled (its
// own bucket, "provider:embeddings", so searches cannot spend the extraction's budget).
func (r *Runtime) embedder() (provider.Embedder, error) {
	c := r.cfg
	// A build that embeds its migrations only up to a version before the embeddings table (db/migrate's
	// EmbeddedThrough: the stand-in for an earlier release in the rolling-upgrade test, README.md#rolling-upgrades)
	// runs as that release did, without embeddings.
	if t := migrate.EmbeddedThrough; t != "" && t < EmbeddingsMigration {
		return nil, nil
	}
	switch c.EmbeddingsKind {
	case "", EmbeddingsLocal:
		return provider.NewLocalEmbedder(), nil
	case EmbeddingsNone:
		return nil, nil
	case EmbeddingsOpenAI:
	default:
		return nil, errors.New("unknown embeddings kind")
	}
	key := c.EmbeddingsAPIKey
	if key == "" {
		key = c.ProviderAPIKey
	}
	o, err := provider.NewOpenAIEmbedder(provider.OpenAIEmbeddingsConfig{BaseURL: c.embeddingsBaseURL(), Model: c.EmbeddingsModel,
		APIKey: key, Dimensions: c.EmbeddingsDimensions, Timeout: Seconds(c.ProviderTimeout)})
	if err != nil {
		return nil, err
	}
	e := r.tel.WrapEmbedder(o)
	if c.RateLimitEnabled {
		limiter := coordinator.NewRateLimiter(r.store)
		limit, window := c.RateLimitRequests, Seconds(c.RateLimitWindowSeconds)
		e = provider.WithEmbedRateLimit(e, func(ctx context.Context) (bool, time.Duration, error) {
			d, err := limiter.Allow(ctx, "provider:embeddings:"+e.Name(), "provider", limit, window)
			return d.Allowed, d.RetryAfter, err
		})
	}
	return e, nil
}

// memoryReader is the Memory reader of the API: full-text ranking, and the vector modes over the embedder.
func (r *Runtime) memoryReader(e provider.Embedder) memory.Reader {
	return memory.Reader{Store: r.store, Embedder: e, QueryTimeout: Seconds(r.cfg.EmbeddingsQueryTimeoutSeconds),
		MinSimilarity: r.cfg.EmbeddingsMinSimilarity}
}
