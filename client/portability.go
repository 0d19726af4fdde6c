package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// ErrExportIncomplete means an export stream ended without its trailer: the scope changed while the server read it
// (or the connection broke). Export again; what was written is not importable (docs/portability.md).
var ErrExportIncomplete = errors.New("powercontext: the export stream ended without its trailer")

// ImportCounts are the records an import wrote.
type ImportCounts struct {
	Sources    int64 `json:"sources"`
	Tombstones int64 `json:"tombstones"`
	Cursors    int64 `json:"cursors"`
	Revisions  int64 `json:"revisions"`
	Entries    int64 `json:"entries"`
	Embeddings int64 `json:"embeddings"`
	Candidates int64 `json:"candidates"`
}

// ImportScopeResult is the answer of ImportScope.
type ImportScopeResult struct {
	ScopeID       string       `json:"scope_id"`
	SourceScopeID string       `json:"source_scope_id"`
	Counts        ImportCounts `json:"counts"`
	OperationID   string       `json:"operation_id"`
	StatusURL     string       `json:"status_url"`
}

// stream sends one request with body (nil: none) and returns the answer's body unread for a 2xx status, an
// *APIError otherwise. Only ctx bounds it (a stream may take longer than WithTimeout's per-request bound).
func (c *Client) stream(ctx context.Context, method, path string, query url.Values, body io.Reader, contentType string) (*http.Response, error) {
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("powercontext: invalid server URL %q: %w", c.display, err)
	}
	req.Header.Set("Accept", "application/x-ndjson, application/json")
	req.Header.Set("User-Agent", userAgent)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, ctx, err)
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, c.transportError(ctx, ctx, err)
	}
	if c.observe != nil {
		c.observe(method, path, resp.StatusCode, b)
	}
	return nil, decodeAPIError(&response{status: resp.StatusCode, header: resp.Header, body: b})
}

// ExportScope writes the export stream of scope to w (GET /v1/scopes/{id}/export), with the entries' vectors when
// embeddings is set. It returns the bytes written and ErrExportIncomplete when the stream lacks its trailer.
func (c *Client) ExportScope(ctx context.Context, scope string, embeddings bool, w io.Writer) (int64, error) {
	var q url.Values
	if embeddings {
		q = url.Values{"embeddings": {"true"}}
	}
	resp, err := c.stream(ctx, http.MethodGet, "/v1/scopes/"+url.PathEscape(scope)+"/export", q, nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	t := &lastLine{}
	n, err := io.Copy(io.MultiWriter(w, t), resp.Body)
	if err != nil {
		return n, c.transportError(ctx, ctx, err)
	}
	if !t.isTrailer() {
		return n, ErrExportIncomplete
	}
	return n, nil
}

// ImportScope imports the export stream r into the empty scope (POST /v1/scopes/{id}/import).
func (c *Client) ImportScope(ctx context.Context, scope string, r io.Reader) (ImportScopeResult, error) {
	var out ImportScopeResult
	path := "/v1/scopes/" + url.PathEscape(scope) + "/import"
	resp, err := c.stream(ctx, http.MethodPost, path, nil, r, "application/x-ndjson")
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return out, c.transportError(ctx, ctx, err)
	}
	if c.observe != nil {
		c.observe(http.MethodPost, path, resp.StatusCode, b)
	}
	return out, decodeBody(http.MethodPost, path, &response{status: resp.StatusCode, header: resp.Header, body: b}, &out)
}

// ExportHeaderScope reads the scope id from the header line of an export stream (its first line).
func ExportHeaderScope(firstLine []byte) (string, error) {
	var h struct {
		Type    string `json:"type"`
		ScopeID string `json:"scope_id"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(firstLine), &h); err != nil || h.Type != "header" || h.ScopeID == "" {
		return "", errors.New("powercontext: the input does not start with an export header")
	}
	return h.ScopeID, nil
}

// PeekExportScope returns the scope id of the export stream in br without consuming it.
func PeekExportScope(br *bufio.Reader) (string, error) {
	for n := 4096; ; n *= 2 {
		b, err := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return ExportHeaderScope(b[:i])
		}
		if err != nil || n >= br.Size() {
			return ExportHeaderScope(b)
		}
	}
}

// lastLine keeps the last complete line written to it (bounded: a line longer than 1 KiB is not a trailer).
type lastLine struct {
	cur, last []byte
	long      bool
}

func (l *lastLine) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '\n' {
			if !l.long {
				l.last = append(l.last[:0], l.cur...)
			} else {
				l.last = l.last[:0]
			}
			l.cur, l.long = l.cur[:0], false
			continue
		}
		if len(l.cur) < 1024 {
			l.cur = append(l.cur, c)
		} else {
			l.long = true
		}
	}
	return len(p), nil
}

func (l *lastLine) isTrailer() bool {
	if len(l.cur) > 0 || l.long {
		return false // the stream does not end with a newline
	}
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(l.last, &t) == nil && t.Type == "trailer"
}
