package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/errclass"
)

func TestVectorEncoding(t *testing.T) {
	v := []float32{1, -0.5, 0.25, float32(math.Pi)}
	b := EncodeVector(v)
	require.Equal(t, []byte{0, 0, 0x80, 0x3f}, b[:4], "little-endian IEEE 754 float32")
	got, ok := DecodeVector(b, 4)
	require.True(t, ok)
	require.Equal(t, v, got)
	_, ok = DecodeVector(b, 3)
	require.False(t, ok, "the byte count must match the dimensions")
	_, ok = DecodeVector(nil, 0)
	require.False(t, ok)
	require.InDelta(t, 1-0.5*0.5, Dot(v[:2], []float32{1, 0.5}), 1e-9)
	require.Zero(t, Dot(v, v[:2]), "vectors of different lengths are not comparable")
	d, ok := DotEncoded([]float32{2, 1, 0, 1}, b)
	require.True(t, ok)
	require.InDelta(t, Dot([]float32{2, 1, 0, 1}, v), d, 1e-6, "the same product, straight from the stored bytes")
	_, ok = DotEncoded(v[:3], b)
	require.False(t, ok)
}

func TestLocalEmbedder(t *testing.T) {
	e := NewLocalEmbedder()
	require.Equal(t, "local", e.Name())
	require.Equal(t, LocalEmbeddingModel, e.Model())
	texts := []string{
		"The deploy script lives in ops/deploy.sh.", // 0
		"Releases go out every Tuesday.",            // 1
		"Staging uses PostgreSQL 16.",               // 2
		"数据库迁移在周五进行。",                               // 3
		"Alice owns billing.",                       // 4
		"…!?",                                       // 5: nothing to embed
	}
	vs, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	for i, v := range vs[:5] {
		require.Len(t, v, LocalEmbeddingDimensions)
		require.InDelta(t, 1, Dot(v, v), 1e-5, "unit length (%d)", i)
	}
	require.Zero(t, Dot(vs[5], vs[5]), "a text without letters or digits is the zero vector")
	again, err := e.Embed(context.Background(), texts[:1])
	require.NoError(t, err)
	require.Equal(t, vs[0], again[0], "deterministic")

	best := func(q string) int {
		qv := LocalVector(q)
		top, score := -1, -2.0
		for i, v := range vs {
			if s := Dot(qv, v); s > score {
				top, score = i, s
			}
		}
		return top
	}
	for q, want := range map[string]int{
		"deploy script":        0,
		"deplyo scirpt":        0, // two typos
		"release":              1, // singular of "Releases"
		"ＰＯＳＴＧＲＥＳＱＬ":           2, // full-width forms fold to ASCII
		"postgres":             2, // a prefix shares most trigrams
		"数据库":                  3, // CJK character pairs
		"Who owns the billing": 4,
	} {
		require.Equal(t, want, best(q), "query %q", q)
	}
	require.Greater(t, Dot(LocalVector("café menu"), LocalVector("Cafe menu")), 0.99, "accents fold")
	require.Less(t, Dot(LocalVector("how do we ship a release"), LocalVector("We order pizza on Fridays.")), LocalMinSimilarity,
		"shared function words alone stay below the match threshold")
	require.Greater(t, Dot(LocalVector("deploy"), LocalVector("The deploy script lives in ops/deploy.sh.")), LocalMinSimilarity)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Embed(ctx, texts)
	requireFailure(t, err, errclass.CodeUnavailable)
	require.ErrorIs(t, err, context.Canceled)
}

func newTestEmbedder(t *testing.T, url, key string, dims int) *OpenAIEmbedder {
	t.Helper()
	return newTestEmbedderWithin(t, url, key, dims, testTimeout)
}

func newTestEmbedderWithin(t *testing.T, url, key string, dims int, timeout time.Duration) *OpenAIEmbedder {
	t.Helper()
	o, err := NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: url + "/v1", Model: "embed-model", APIKey: key, Dimensions: dims,
		Timeout: timeout})
	require.NoError(t, err)
	return o
}

// embedBody answers an embeddings request with the vectors, in reverse order (the index says which is which).
func embedBody(t *testing.T, vecs [][]float32) []byte {
	t.Helper()
	data := make([]any, 0, len(vecs))
	for i := len(vecs) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vecs[i]})
	}
	b, err := json.Marshal(map[string]any{"object": "list", "data": data, "model": "embed-model"})
	require.NoError(t, err)
	return b
}

func TestOpenAIEmbedderConfig(t *testing.T) {
	_, err := NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: "ftp://host", Model: "m"})
	require.ErrorIs(t, err, ErrBaseURL)
	_, err = NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: "http://host/v1", Model: ""})
	require.ErrorIs(t, err, ErrModel)
	_, err = NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: "http://host/v1", Model: "m", Dimensions: -1})
	require.ErrorIs(t, err, ErrDimensions)
	o, err := NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: "http://host/v1/", Model: "m"})
	require.NoError(t, err)
	require.Equal(t, "openai", o.Name())
	require.Equal(t, "m", o.Model())
	require.Equal(t, "http://host/v1/embeddings", o.endpoint)
	require.Equal(t, DefaultOpenAITimeout, o.timeout)
	o, err = NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: "http://host/v1", Model: "m", Dimensions: 256})
	require.NoError(t, err)
	require.Equal(t, "m@256", o.Model(), "the dimension count is part of the space")
}

func TestOpenAIEmbed(t *testing.T) {
	var mu sync.Mutex
	var got struct {
		method, path, auth string
		body               map[string]any
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		got.method, got.path, got.auth = r.Method, r.URL.Path, r.Header.Get("Authorization")
		_ = json.Unmarshal(raw, &got.body)
		mu.Unlock()
		_, _ = w.Write(embedBody(t, [][]float32{{3, 4}, {0, 2}}))
	})
	o := newTestEmbedder(t, srv.URL, testKey, 2)
	vs, err := o.Embed(context.Background(), []string{"first text", "second text"})
	require.NoError(t, err)
	require.Equal(t, [][]float32{{0.6, 0.8}, {0, 1}}, vs, "matched by index and normalised")
	mu.Lock()
	require.Equal(t, http.MethodPost, got.method)
	require.Equal(t, "/v1/embeddings", got.path)
	require.Equal(t, "Bearer "+testKey, got.auth)
	require.Equal(t, map[string]any{"model": "embed-model", "input": []any{"first text", "second text"},
		"encoding_format": "float", "dimensions": float64(2)}, got.body)
	mu.Unlock()

	vs, err = newTestEmbedder(t, srv.URL, "", 0).Embed(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, vs, "no texts, no call")
	mu.Lock()
	require.Equal(t, "Bearer "+testKey, got.auth, "the empty call reached nobody")
	mu.Unlock()
}

func TestOpenAIEmbedErrorMapping(t *testing.T) {
	two := func(t *testing.T, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }
	}
	cases := []struct {
		name    string
		handler func(t *testing.T) http.HandlerFunc
		code    string
	}{
		{"slow", func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute): // far past shortTimeout, so only the timeout ends the call
				}
			}
		}, errclass.CodeUnavailable},
		{"429", func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }
		}, errclass.CodeRateLimited},
		{"500", func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }
		}, errclass.CodeUnavailable},
		{"400", func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }
		}, errclass.CodeRequestRejected},
		{"413", func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusRequestEntityTooLarge) }
		}, errclass.CodeRequestRejected},
		{"garbage", func(t *testing.T) http.HandlerFunc { return two(t, "<html>") }, errclass.CodeInvalidOutput},
		{"one vector for two texts", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":[1,0]}]}`)
		}, errclass.CodeInvalidOutput},
		{"duplicate index", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`)
		}, errclass.CodeInvalidOutput},
		{"index out of range", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[0,1]}]}`)
		}, errclass.CodeInvalidOutput},
		{"missing index", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":[1,0]},{"embedding":[0,1]}]}`)
		}, errclass.CodeInvalidOutput},
		{"lengths differ", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1,0]}]}`)
		}, errclass.CodeInvalidOutput},
		{"zero vector", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,0]}]}`)
		}, errclass.CodeInvalidOutput},
		{"base64 instead of floats", func(t *testing.T) http.HandlerFunc {
			return two(t, `{"data":[{"index":0,"embedding":"AACAPw=="},{"index":1,"embedding":"AACAPw=="}]}`)
		}, errclass.CodeInvalidOutput},
		{"oversized body", func(t *testing.T) http.HandlerFunc {
			return two(t, strings.Repeat(" ", maxEmbedResponseBytes+10))
		}, errclass.CodeInvalidOutput},
		{"endless body", func(*testing.T) http.HandlerFunc { return endless }, errclass.CodeInvalidOutput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.handler(t))
			timeout := testTimeout
			if tc.name == "slow" {
				timeout = shortTimeout
			}
			_, err := newTestEmbedderWithin(t, srv.URL, testKey, 0, timeout).Embed(context.Background(), []string{"a", "b"})
			requireFailure(t, err, tc.code)
			_, snoozes := errclass.SnoozeHint(err)
			require.Equal(t, tc.code == errclass.CodeRateLimited, snoozes)
		})
	}
	t.Run("configured dimensions enforced", func(t *testing.T) {
		srv := serve(t, two(t, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}`))
		_, err := newTestEmbedder(t, srv.URL, testKey, 3).Embed(context.Background(), []string{"a", "b"})
		requireFailure(t, err, errclass.CodeInvalidOutput)
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := newTestEmbedder(t, url, testKey, 0).Embed(context.Background(), []string{"a"})
		requireFailure(t, err, errclass.CodeUnavailable)
		require.NotContains(t, err.Error(), url)
	})
	t.Run("caller deadline shorter than the timeout", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		})
		o, err := NewOpenAIEmbedder(OpenAIEmbeddingsConfig{BaseURL: srv.URL, Model: "m", Timeout: time.Minute})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		// Were the caller's deadline ignored, the handler's empty answer after 5 s would be invalid output, not
		// unavailable: the classification is the proof, no wall-clock bound needed.
		_, err = o.Embed(ctx, []string{"a"})
		requireFailure(t, err, errclass.CodeUnavailable)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// TestOpenAIEmbedCanary: a key and a text echoed back by the upstream in every way never reach a returned error.
func TestOpenAIEmbedCanary(t *testing.T) {
	const canary = "sk-CANARY-embed-91c2"
	const textCanary = "ENTRY-CANARY-77aa"
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Echo-Key", r.Header.Get("Authorization"))
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"message":"bad key ` + r.Header.Get("Authorization") + ` for ` +
				strings.ReplaceAll(string(raw), `"`, `'`) + `"}}`))
		}
	}
	for i, h := range []http.HandlerFunc{echo(http.StatusUnauthorized), echo(http.StatusBadRequest),
		echo(http.StatusTooManyRequests), echo(http.StatusInternalServerError), echo(http.StatusOK)} {
		srv := serve(t, h)
		e := newTestEmbedder(t, srv.URL, canary, 0)
		for _, emb := range []Embedder{e, WithEmbedRateLimit(e, func(context.Context) (bool, time.Duration, error) { return true, 0, nil })} {
			_, err := emb.Embed(context.Background(), []string{"about " + textCanary})
			require.Error(t, err, "handler %d", i)
			require.Equal(t, errclass.CategoryProvider, errclass.Classify(err).Category)
			for e := err; e != nil; e = errors.Unwrap(e) {
				require.NotContains(t, e.Error(), canary, "handler %d", i)
				require.NotContains(t, e.Error(), textCanary, "handler %d", i)
				require.NotContains(t, e.Error(), "bad key", "handler %d", i)
			}
		}
	}
}

func TestWithEmbedRateLimit(t *testing.T) {
	allowed, retryAfter, limiterErr := true, time.Duration(0), error(nil)
	e := WithEmbedRateLimit(NewLocalEmbedder(), func(context.Context) (bool, time.Duration, error) { return allowed, retryAfter, limiterErr })
	require.Equal(t, "local", e.Name())
	require.Equal(t, LocalEmbeddingModel, e.Model())
	vs, err := e.Embed(context.Background(), []string{"a fact"})
	require.NoError(t, err)
	require.Len(t, vs, 1)

	allowed, retryAfter = false, 2*time.Second
	_, err = e.Embed(context.Background(), []string{"a fact"})
	requireFailure(t, err, errclass.CodeRateLimited)
	d, ok := RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, 2*time.Second, d)

	limiterErr = errors.New("limiter said something secret")
	_, err = e.Embed(context.Background(), []string{"a fact"})
	requireFailure(t, err, errclass.CodeUnavailable)
	require.NotContains(t, err.Error(), "secret")
	require.Equal(t, Embedder(NewLocalEmbedder()), WithEmbedRateLimit(NewLocalEmbedder(), nil))
}
