package provider

import (
	"context"
	"encoding/binary"
	"math"
	"time"
)

// Embedder turns texts into vectors of one embedding space (docs/memory.md#embeddings). Errors are
// *errclass.Error values (possibly wrapped) with a bounded provider/* pair, exactly as a Provider's, and
// follow the same privacy rule: no text, vector, key or upstream error text ever reaches an error.
type Embedder interface {
	// Name is a bounded metric label: "local" or "openai".
	Name() string
	// Model names the embedding space. It is stored with every vector, and only vectors of the configured Model are
	// ever compared with a query's: a different model (or a different dimension count) is another space.
	Model() string
	// Embed returns one vector per text, in order, each of the same length and of unit length (L2). A caller sends
	// at most MaxEmbedBatch texts per call: each call is one upstream request and one admission of the shared rate
	// limiter.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// MaxEmbedBatch is the largest number of texts one Embed call carries (at most MaxEntryBytes each).
const MaxEmbedBatch = 100

// EncodeVector is the stored form of a vector: little-endian IEEE 754 float32, 4 bytes per dimension.
func EncodeVector(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// DecodeVector reads a stored vector of dims dimensions; ok is false when the bytes do not hold exactly that.
func DecodeVector(b []byte, dims int) (v []float32, ok bool) {
	if dims <= 0 || len(b) != 4*dims {
		return nil, false
	}
	v = make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

// Dot is the dot product of two vectors of the same length (the cosine similarity of unit vectors); 0 when the
// lengths differ.
func Dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return float64(s)
}

// DotEncoded is Dot of v and a stored vector (EncodeVector's bytes) without decoding it first; ok is false when the
// bytes do not hold exactly len(v) dimensions.
func DotEncoded(v []float32, b []byte) (dot float64, ok bool) {
	if len(b) != 4*len(v) || len(v) == 0 {
		return 0, false
	}
	var s float32
	for i, x := range v {
		s += x * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return float64(s), true
}

// normalize scales v to unit length in place; ok is false for a zero vector or one with a non-finite component.
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		sum += f * f
	}
	if sum == 0 {
		return false
	}
	n := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= n
	}
	return true
}

type limitedEmbedder struct {
	next  Embedder
	allow AllowFunc
}

// WithEmbedRateLimit returns e with every Embed call gated by allow, like WithRateLimit: a denied call fails with
// provider/rate_limited (with the limiter's retry hint), a limiter error with provider/unavailable. A nil allow
// returns e unchanged.
func WithEmbedRateLimit(e Embedder, allow func(ctx context.Context) (allowed bool, retryAfter time.Duration, err error)) Embedder {
	if allow == nil {
		return e
	}
	return &limitedEmbedder{next: e, allow: allow}
}

// Name implements Embedder (the wrapped embedder's label).
func (l *limitedEmbedder) Name() string { return l.next.Name() }

// Model implements Embedder (the wrapped embedder's space).
func (l *limitedEmbedder) Model() string { return l.next.Model() }

// Embed implements Embedder.
func (l *limitedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	allowed, retryAfter, err := l.allow(ctx)
	if err != nil {
		return nil, errUnavailable()
	}
	if !allowed {
		return nil, rateLimitedErr(retryAfter)
	}
	return l.next.Embed(ctx, texts)
}
