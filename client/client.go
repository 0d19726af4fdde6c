package client

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of New.
const (
	DefaultTimeout           = 30 * time.Second // per request
	DefaultOperationDeadline = 30 * time.Second
	DefaultPollInterval      = 200 * time.Millisecond
	// maxResponseBytes caps the body read from one answer.
	maxResponseBytes = 32 << 20
	userAgent        = "powercontext-go-client"
)

// Client calls one powercontext API (any replica behind baseURL). It is safe for concurrent use.
type Client struct {
	base     string // without a trailing slash
	display  string // base with any password redacted, for messages
	token    string
	timeout  time.Duration
	deadline time.Duration
	poll     time.Duration
	hc       *http.Client
	rootCAs  *x509.CertPool // WithRootCAs
	observe  func(method, path string, status int, body []byte)
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends "Authorization: Bearer <token>" on every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithTimeout bounds each HTTP request (default 30 s; 0 means no per-request bound).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithOperationDeadline bounds how long FlushMemory and WaitOperation wait for an operation (default 30 s),
// counted from the submission.
func WithOperationDeadline(d time.Duration) Option { return func(c *Client) { c.deadline = d } }

// WithPollInterval sets the pause between two polls of an operation (default 200 ms).
func WithPollInterval(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.poll = d
		}
	}
}

// WithHTTPClient replaces the HTTP client (default: a new http.Client without a global timeout).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithResponseObserver calls fn with every HTTP answer received (method, request path, status, body). The command
// line uses it to print the server's raw JSON.
func WithResponseObserver(fn func(method, path string, status int, body []byte)) Option {
	return func(c *Client) { c.observe = fn }
}

// New returns a client of the API at baseURL (e.g. http://127.0.0.1:8080).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		base:     strings.TrimRight(baseURL, "/"),
		timeout:  DefaultTimeout,
		deadline: DefaultOperationDeadline,
		poll:     DefaultPollInterval,
		hc:       &http.Client{},
		now:      time.Now,
		sleep:    sleepCtx,
	}
	c.display = c.base
	if u, err := url.Parse(c.base); err == nil {
		c.display = u.Redacted()
	}
	for _, o := range opts {
		o(c)
	}
	c.applyRootCAs()
	return c
}

// BaseURL returns the API address with any password redacted.
func (c *Client) BaseURL() string { return c.display }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// response is one HTTP answer, read completely.
type response struct {
	status int
	header http.Header
	body   []byte
}

// roundTrip sends one request and reads its answer whatever the status. Only transport failures are errors.
func (c *Client) roundTrip(ctx context.Context, method, path string, query url.Values, in any, header map[string]string) (*response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("powercontext: encode %s %s request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	reqCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(reqCtx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("powercontext: invalid server URL %q: %w", c.display, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, reqCtx, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, c.transportError(ctx, reqCtx, err)
	}
	if c.observe != nil {
		c.observe(method, path, resp.StatusCode, b)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// transportError keeps the caller's own cancellation as is and reports everything else as a ConnectionError.
func (c *Client) transportError(parent, reqCtx context.Context, err error) error {
	if parent.Err() != nil {
		return fmt.Errorf("powercontext: request to %s abandoned: %w", c.display, parent.Err())
	}
	var ue *url.Error
	timeout := errors.Is(reqCtx.Err(), context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Timeout())
	if errors.As(err, &ue) {
		err = ue.Err // the URL is already in the message
	}
	return &ConnectionError{URL: c.display, Timeout: timeout, Err: err}
}

// send is roundTrip with every status >= 400 decoded into an *APIError.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, in any, header map[string]string) (*response, error) {
	resp, err := c.roundTrip(ctx, method, path, query, in, header)
	if err != nil {
		return nil, err
	}
	if resp.status >= 400 {
		return nil, decodeAPIError(resp)
	}
	return resp, nil
}

// call sends one request and decodes a 2xx JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, query, in, nil)
	if err != nil {
		return err
	}
	return decodeBody(method, path, resp, out)
}

func decodeBody(method, path string, resp *response, out any) error {
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("powercontext: unexpected answer to %s %s (status %d): %w", method, path, resp.status, err)
	}
	return nil
}

func decodeAPIError(resp *response) *APIError {
	e := &APIError{Status: resp.status, RequestID: resp.header.Get("X-Request-ID")}
	if s := resp.header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	var env struct {
		Error *struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(resp.body, &env) == nil && env.Error != nil && env.Error.Code != "" {
		e.Code, e.Message, e.Details = env.Error.Code, env.Error.Message, env.Error.Details
		return e
	}
	e.Code = CodeUnexpectedResponse
	e.Message = fmt.Sprintf("HTTP %d %s", resp.status, http.StatusText(resp.status))
	return e
}

func setInt(q url.Values, name string, v int64) {
	if v != 0 {
		q.Set(name, strconv.FormatInt(v, 10))
	}
}

func setString(q url.Values, name, v string) {
	if v != "" {
		q.Set(name, v)
	}
}

// CaptureSource appends a Source to its scope's journal (POST /v1/sources). A repeated (scope_id, source_id)
// returns the first capture with Created false.
func (c *Client) CaptureSource(ctx context.Context, req CaptureSourceRequest) (CaptureSourceResult, error) {
	var out CaptureSourceResult
	err := c.call(ctx, http.MethodPost, "/v1/sources", nil, req, &out)
	return out, err
}

// ListSources returns a page of a scope's journal in journal order (GET /v1/sources).
func (c *Client) ListSources(ctx context.Context, p ListSourcesParams) (SourceList, error) {
	q := url.Values{"scope_id": {p.ScopeID}}
	setInt(q, "after", p.After)
	setInt(q, "limit", int64(p.Limit))
	var out SourceList
	err := c.call(ctx, http.MethodGet, "/v1/sources", q, nil, &out)
	return out, err
}

// ForgetSource forgets one Source (DELETE /v1/sources/{id}?scope_id=): its content is erased at once and, when
// Memory referenced it, a memory_redact operation removes it from Memory. 404 source_not_found is an *APIError.
func (c *Client) ForgetSource(ctx context.Context, scope, sourceID string) (ForgetSourceResult, error) {
	var out ForgetSourceResult
	err := c.call(ctx, http.MethodDelete, "/v1/sources/"+url.PathEscape(sourceID), url.Values{"scope_id": {scope}}, nil, &out)
	return out, err
}

// EraseScope erases a whole scope (DELETE /v1/scopes/{id}) and returns its scope_erase operation (follow it with
// WaitOperation); a live erase is joined.
func (c *Client) EraseScope(ctx context.Context, scope string) (EraseScopeResult, error) {
	var out EraseScopeResult
	err := c.call(ctx, http.MethodDelete, "/v1/scopes/"+url.PathEscape(scope), nil, nil, &out)
	return out, err
}

// GetMemory returns a scope's current Memory revision and its entries (GET /v1/memory).
func (c *Client) GetMemory(ctx context.Context, scope string) (Memory, error) {
	var out Memory
	err := c.call(ctx, http.MethodGet, "/v1/memory", url.Values{"scope_id": {scope}}, nil, &out)
	return out, err
}

// SearchMemory returns the entries of a scope's current Memory that match query, best first, each with its Score and
// Scores, in the server's default mode (GET /v1/memory/search); limit 0 means the server default.
func (c *Client) SearchMemory(ctx context.Context, scope, query string, limit int) (Memory, error) {
	return c.SearchMemoryWith(ctx, SearchParams{ScopeID: scope, Q: query, Limit: limit})
}

// SearchParams are the arguments of SearchMemoryWith. Limit 0 means the server default; Mode "" the server's
// default (hybrid when the revision has vectors of the configured model, else fts).
type SearchParams struct {
	ScopeID, Q string
	Limit      int
	Mode       string // ModeFTS, ModeSemantic, ModeHybrid or ""
}

// SearchMemoryWith is SearchMemory with every parameter (GET /v1/memory/search). The answer's Mode names the ranking
// that ran and Degraded whether a vector mode fell back to full text.
func (c *Client) SearchMemoryWith(ctx context.Context, p SearchParams) (Memory, error) {
	q := url.Values{"scope_id": {p.ScopeID}, "q": {p.Q}}
	setInt(q, "limit", int64(p.Limit))
	setString(q, "mode", p.Mode)
	var out Memory
	err := c.call(ctx, http.MethodGet, "/v1/memory/search", q, nil, &out)
	return out, err
}

// GetMemoryRevision returns one revision of a scope's Memory (GET /v1/memory?revision=); a missing revision is an
// *APIError with code revision_not_found.
func (c *Client) GetMemoryRevision(ctx context.Context, scope string, revision int64) (Memory, error) {
	q := url.Values{"scope_id": {scope}}
	setInt(q, "revision", revision)
	var out Memory
	err := c.call(ctx, http.MethodGet, "/v1/memory", q, nil, &out)
	return out, err
}

// ListMemoryRevisions returns a page of a scope's revisions, newest first (GET /v1/memory/revisions); cursor ""
// is the first page, limit 0 the server default.
func (c *Client) ListMemoryRevisions(ctx context.Context, scope, cursor string, limit int) (MemoryRevisionList, error) {
	q := url.Values{"scope_id": {scope}}
	setString(q, "cursor", cursor)
	setInt(q, "limit", int64(limit))
	var out MemoryRevisionList
	err := c.call(ctx, http.MethodGet, "/v1/memory/revisions", q, nil, &out)
	return out, err
}

// DiffMemory compares two revisions (GET /v1/memory/diff); to 0 is the current revision, from < 0 the one
// before to (from 0 is the empty Memory).
func (c *Client) DiffMemory(ctx context.Context, scope string, from, to int64) (MemoryDiff, error) {
	q := url.Values{"scope_id": {scope}}
	if from >= 0 {
		q.Set("from", strconv.FormatInt(from, 10))
	}
	setInt(q, "to", to)
	var out MemoryDiff
	err := c.call(ctx, http.MethodGet, "/v1/memory/diff", q, nil, &out)
	return out, err
}

// GetContext assembles a scope's context for query q within maxTokens (GET /v1/context); q "" means none,
// maxTokens 0 the server default.
func (c *Client) GetContext(ctx context.Context, scope, q string, maxTokens int) (Context, error) {
	return c.GetContextWith(ctx, ContextParams{ScopeID: scope, Q: q, MaxTokens: maxTokens})
}

// ContextParams are the arguments of GetContextWith: Q "" means none, MaxTokens 0 the server default, Mode "" the
// server's default ranking of the entries.
type ContextParams struct {
	ScopeID, Q string
	MaxTokens  int
	Mode       string // ModeFTS, ModeSemantic, ModeHybrid or ""
}

// GetContextWith is GetContext with every parameter (GET /v1/context).
func (c *Client) GetContextWith(ctx context.Context, p ContextParams) (Context, error) {
	v := url.Values{"scope_id": {p.ScopeID}}
	setString(v, "q", p.Q)
	setInt(v, "max_tokens", int64(p.MaxTokens))
	setString(v, "mode", p.Mode)
	var out Context
	err := c.call(ctx, http.MethodGet, "/v1/context", v, nil, &out)
	return out, err
}

func operationPath(id string) string { return "/v1/operations/" + url.PathEscape(id) }

// GetOperation returns one operation (GET /v1/operations/{id}); 404 operation_not_found is an *APIError.
func (c *Client) GetOperation(ctx context.Context, id string) (OperationRecord, error) {
	var out OperationRecord
	err := c.call(ctx, http.MethodGet, operationPath(id), nil, nil, &out)
	return out, err
}

// ListOperations returns a page of operations, newest first (GET /v1/operations).
func (c *Client) ListOperations(ctx context.Context, p ListOperationsParams) (OperationList, error) {
	q := url.Values{}
	setString(q, "scope_id", p.ScopeID)
	setString(q, "kind", p.Kind)
	setString(q, "status", p.Status)
	setString(q, "cursor", p.Cursor)
	setInt(q, "limit", int64(p.Limit))
	var out OperationList
	err := c.call(ctx, http.MethodGet, "/v1/operations", q, nil, &out)
	return out, err
}

// CancelOperation cancels an operation at expectedVersion (→ cancelled or cancelling); a stale version or an
// illegal transition is a 409 operation_conflict *APIError.
func (c *Client) CancelOperation(ctx context.Context, id string, expectedVersion int64) (OperationRecord, error) {
	var out OperationRecord
	err := c.call(ctx, http.MethodPost, operationPath(id)+"/cancel", nil, expectedVersionBody{expectedVersion}, &out)
	return out, err
}

// RetryOperation requeues a failed operation at expectedVersion (→ queued).
func (c *Client) RetryOperation(ctx context.Context, id string, expectedVersion int64) (OperationRecord, error) {
	var out OperationRecord
	err := c.call(ctx, http.MethodPost, operationPath(id)+"/retry", nil, expectedVersionBody{expectedVersion}, &out)
	return out, err
}

// SkipOperation skips a failed window at expectedVersion (→ succeeded with result code skipped): its Sources are
// moved past without being processed and the scope's lane moves on. Admins only.
func (c *Client) SkipOperation(ctx context.Context, id string, expectedVersion int64) (OperationRecord, error) {
	var out OperationRecord
	err := c.call(ctx, http.MethodPost, operationPath(id)+"/skip", nil, expectedVersionBody{expectedVersion}, &out)
	return out, err
}

// ListExperienceCandidates returns a scope's Experience candidates, newest first.
func (c *Client) ListExperienceCandidates(ctx context.Context, p ListCandidatesParams) (CandidateList, error) {
	q := url.Values{"scope_id": {p.ScopeID}}
	setString(q, "status", p.Status)
	setInt(q, "limit", int64(p.Limit))
	var out CandidateList
	err := c.call(ctx, http.MethodGet, "/v1/experience/candidates", q, nil, &out)
	return out, err
}

// ApproveCandidate approves a pending candidate at expectedVersion (409 candidate_conflict when stale).
func (c *Client) ApproveCandidate(ctx context.Context, id string, expectedVersion int64) (Candidate, error) {
	return c.review(ctx, id, "approve", expectedVersion)
}

// RejectCandidate rejects a pending candidate at expectedVersion (409 candidate_conflict when stale).
func (c *Client) RejectCandidate(ctx context.Context, id string, expectedVersion int64) (Candidate, error) {
	return c.review(ctx, id, "reject", expectedVersion)
}

func (c *Client) review(ctx context.Context, id, verb string, expectedVersion int64) (Candidate, error) {
	var out Candidate
	err := c.call(ctx, http.MethodPost, "/v1/experience/candidates/"+url.PathEscape(id)+"/"+verb, nil,
		expectedVersionBody{expectedVersion}, &out)
	return out, err
}

// Members returns the live runtime members (GET /v1/runtime/members).
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	var out struct {
		Items []Member `json:"items"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/runtime/members", nil, nil, &out)
	return out.Items, err
}

// Ready returns the readiness of the replica that answered (GET /health/ready). A 503 answer (not_ready or
// misconfigured) returns the decoded Health together with an *APIError of status 503.
func (c *Client) Ready(ctx context.Context) (Health, error) {
	const path = "/health/ready"
	resp, err := c.roundTrip(ctx, http.MethodGet, path, nil, nil, nil)
	if err != nil {
		return Health{}, err
	}
	var h Health
	if resp.status != http.StatusOK && resp.status != http.StatusServiceUnavailable {
		return Health{}, decodeAPIError(resp)
	}
	if err := decodeBody(http.MethodGet, path, resp, &h); err != nil {
		return Health{}, err
	}
	if resp.status == http.StatusServiceUnavailable {
		return h, &APIError{Status: resp.status, Code: "runtime_not_ready", Message: "powercontext is " + h.Status,
			RequestID: resp.header.Get("X-Request-ID")}
	}
	return h, nil
}
