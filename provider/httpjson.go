package provider

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"
)

// upstream is one OpenAI-compatible endpoint: the chat-completions client and the embeddings client share how they
// call it and how they classify what comes back (docs/protocol.md#errors).
type upstream struct {
	client *http.Client
	apiKey string // sent only as "Authorization: Bearer KEY"
}

// postJSON POSTs body to endpoint within timeout and returns the response body of a 2xx answer, of at most limit
// bytes. Every error is a
// bounded *errclass.Error (wrapped with the caller's context error when the caller cancelled): 429 is
// provider/rate_limited with the Retry-After hint, 400/413/422 provider/request_rejected (not retryable), any other
// non-2xx, a transport error or a timeout provider/unavailable, a body over limit provider/invalid_output. Upstream error values and bodies are dropped, never wrapped.
// The body is bounded by bytes, not only by time: at most limit+1 bytes are ever read from the connection (the
// answer, then the drain that lets the connection be reused), so an endless or oversized body is classified as
// soon as the cap is passed, however slowly or quickly it arrives.
func (u upstream) postJSON(ctx context.Context, endpoint string, body []byte, timeout time.Duration, limit int64) ([]byte, error) {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(callCtx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, errUnavailable()
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	if u.apiKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+u.apiKey)
	}
	resp, err := u.client.Do(httpReq)
	if err != nil {
		return nil, unavailable(ctx)
	}
	capped := io.LimitReader(resp.Body, limit+1) // every read below goes through the one cap
	defer func() {
		_, _ = io.Copy(io.Discard, capped)
		_ = resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, rateLimitedErr(parseRetryAfter(resp.Header.Get("Retry-After")))
	case resp.StatusCode == http.StatusBadRequest, resp.StatusCode == http.StatusRequestEntityTooLarge,
		resp.StatusCode == http.StatusUnprocessableEntity:
		return nil, errRequestRejected()
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, errUnavailable()
	}
	raw, err := io.ReadAll(capped)
	if err != nil {
		return nil, unavailable(ctx)
	}
	if int64(len(raw)) > limit {
		return nil, errInvalidOutput()
	}
	return raw, nil
}
