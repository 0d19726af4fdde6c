package provider

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/errclass"
)

// countingBody is an endless response body that counts the bytes read from it.
type countingBody struct{ n atomic.Int64 }

func (b *countingBody) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	b.n.Add(int64(len(p)))
	return len(p), nil
}

func (*countingBody) Close() error { return nil }

type bodyTransport struct {
	status int
	body   *countingBody
}

func (t bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{StatusCode: t.status, Header: http.Header{}, Body: t.body, Request: r}, nil
}

// TestPostJSONReadsNoMoreThanItsByteCap: an oversized body is bounded by bytes, not by time. Under a timeout no
// test reaches, postJSON reads at most limit+1 bytes of an endless body — the answer and the drain together — and
// classifies it as invalid output; an error status's body is bounded the same way.
func TestPostJSONReadsNoMoreThanItsByteCap(t *testing.T) {
	const limit = 4 << 10
	for _, tc := range []struct {
		status int
		code   string
	}{
		{http.StatusOK, errclass.CodeInvalidOutput},
		{http.StatusInternalServerError, errclass.CodeUnavailable},
		{http.StatusBadRequest, errclass.CodeRequestRejected},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			body := &countingBody{}
			u := upstream{client: &http.Client{Transport: bodyTransport{status: tc.status, body: body}}}
			_, err := u.postJSON(context.Background(), "http://upstream.invalid/v1/x", []byte(`{}`), time.Hour, limit)
			requireFailure(t, err, tc.code)
			require.LessOrEqual(t, body.n.Load(), int64(limit+1), "bytes read past the cap")
		})
	}
}
