package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/mcp"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// apiReplicas starts two real API servers (handlers.New) over one SQLite store, like two api-role replicas.
func apiReplicas(t *testing.T, store db.Store, token string) (a, b *httptest.Server) {
	t.Helper()
	ledger := coordinator.NewLedger(store)
	newServer := func() *httptest.Server {
		d := handlers.Deps{Journal: sources.NewJournal(store), Memory: memory.Reader{Store: store, Embedder: provider.NewLocalEmbedder()},
			Experience: experience.Reviews{Store: store}, Ledger: ledger, Store: store, Role: "api",
			Flusher:   &memory.Flusher{Ledger: ledger, Consumer: memory.Consumer(3)},
			Incubator: &experience.Incubator{Ledger: ledger, Consumer: experience.Consumer(3)}, AuthToken: token, Logger: zerolog.Nop()}
		d.MCP = mcp.NewHandler(mcp.Deps{Journal: d.Journal, Memory: d.Memory, Experience: d.Experience}, true)
		srv := httptest.NewServer(handlers.New(d))
		t.Cleanup(srv.Close)
		return srv
	}
	return newServer(), newServer()
}

// worker runs memory flushes and experience incubations from the ledger until stopped, like a worker-role process.
func worker(t *testing.T, store db.Store) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ledger := coordinator.NewLedger(store)
	handlers := map[string]coordinator.Handler{}
	supported := coordinator.Supported{}
	for _, h := range []coordinator.Handler{&memory.Handler{Store: store, Provider: provider.NewLocal(), Embedder: provider.NewLocalEmbedder()},
		&experience.Handler{Store: store, Provider: provider.NewLocal()}} {
		handlers[h.Kind()], supported[h.Kind()] = h, h.PayloadVersions()
	}
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			res, err := ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "test-worker",
				Supported: supported, Slots: 1, Lease: time.Minute})
			if err != nil || len(res.Claims) == 0 {
				select {
				case <-ctx.Done():
				case <-time.After(5 * time.Millisecond):
				}
				continue
			}
			p, err := handlers[res.Claims[0].Item.Kind].Prepare(ctx, res.Claims[0].Item)
			if err == nil {
				_, _ = ledger.Complete(ctx, res.Claims[0], p.Result, p.Commit)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// TestAgainstRealHandlers runs the client against two real API replicas: every request, polls included, goes to
// the other replica than the one before.
func TestAgainstRealHandlers(t *testing.T) {
	store := enginetest.Open(t, db.EngineSQLite)
	a, b := apiReplicas(t, store, "tok")
	hc, hits := alternate(a, b)
	ctx := context.Background()
	c := client.New("http://replicas.invalid", client.WithToken("tok"), client.WithHTTPClient(hc),
		client.WithPollInterval(10*time.Millisecond), client.WithOperationDeadline(10*time.Second))

	// Without the token: 401 with the request id of the answer.
	_, err := client.New(a.URL).GetMemory(ctx, "team")
	var ae *client.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusUnauthorized, ae.Status)
	require.Equal(t, "unauthorized", ae.Code)
	require.NotEmpty(t, ae.RequestID)

	for _, content := range []string{"The deploy window is Tuesday at noon.", "Alice owns the billing service.", "Bob runs on-call."} {
		_, err := c.CaptureSource(ctx, client.CaptureSourceRequest{ScopeID: "team", Content: content})
		require.NoError(t, err)
	}
	_, err = c.CaptureSource(ctx, client.CaptureSourceRequest{ScopeID: "team", Content: ""})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "invalid_request", ae.Code)
	require.Equal(t, "content", ae.Field())

	// Nothing runs the operation: the deadline passes, the operation stays queued, and it can be cancelled.
	short := client.New("http://replicas.invalid", client.WithToken("tok"), client.WithHTTPClient(hc),
		client.WithPollInterval(10*time.Millisecond), client.WithOperationDeadline(80*time.Millisecond))
	_, err = short.FlushMemory(ctx, "team")
	var pending *client.OperationPendingError
	require.ErrorAs(t, err, &pending)
	require.Equal(t, client.StatusQueued, pending.Status)
	rec, err := c.GetOperation(ctx, pending.OperationID)
	require.NoError(t, err)
	require.Equal(t, client.KindMemoryFlush, rec.Kind)
	_, err = c.CancelOperation(ctx, rec.OperationID, rec.StateVersion+1)
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "operation_conflict", ae.Code)
	cancelled, err := c.CancelOperation(ctx, rec.OperationID, rec.StateVersion)
	require.NoError(t, err)
	require.Equal(t, client.StatusCancelled, cancelled.Status)
	_, err = c.WaitOperation(ctx, rec.OperationID, nil)
	var failed *client.OperationFailedError
	require.ErrorAs(t, err, &failed)
	require.Equal(t, "cancelled", failed.Code)

	// With a worker the flush completes while the client polls.
	stop := worker(t, store)
	defer stop()
	var statuses []string
	res, err := c.FlushMemoryWith(ctx, "team", func(r client.OperationRecord) { statuses = append(statuses, r.Status) })
	require.NoError(t, err)
	require.Equal(t, client.FlushProcessed, res.Status)
	require.Equal(t, int64(3), res.ProcessedSourceCount)
	require.NotNil(t, res.Memory)
	require.Equal(t, int64(1), res.Memory.Revision)
	require.NotNil(t, res.OperationID)
	require.NotEmpty(t, statuses, "respond-async answers 202, then the client polls")
	require.Equal(t, client.StatusQueued, statuses[0])
	flushOp := *res.OperationID

	// Nothing pending: 200 idle.
	res, err = c.FlushMemory(ctx, "team")
	require.NoError(t, err)
	require.Equal(t, client.FlushIdle, res.Status)
	require.Equal(t, int64(3), res.CurrentCursor)

	m, err := c.GetMemory(ctx, "team")
	require.NoError(t, err)
	require.Equal(t, int64(1), *m.Revision)
	require.Len(t, m.Entries, 3)
	for i, e := range m.Entries {
		require.NotNil(t, e.EntryID)
		require.Equal(t, int64(i+1), *e.EntryID, "ids are given in order from 1")
	}
	require.Equal(t, &client.Eviction{Count: 0, EntryIDs: []int64{}}, m.Evicted)
	found, err := c.SearchMemory(ctx, "team", "billing", 5)
	require.NoError(t, err)
	require.Len(t, found.Entries, 1)
	require.NotNil(t, found.Entries[0].Score)
	require.Equal(t, client.ModeHybrid, found.Mode, "the revision has vectors of the replicas' embedder")
	require.False(t, found.Degraded)
	require.NotNil(t, found.Entries[0].Scores.FTS)
	require.NotNil(t, found.Entries[0].Scores.Semantic)
	// A misspelt query: full text finds nothing, the (local, lexical) vectors do.
	found, err = c.SearchMemoryWith(ctx, client.SearchParams{ScopeID: "team", Q: "biling servise", Mode: client.ModeFTS})
	require.NoError(t, err)
	require.Equal(t, client.ModeFTS, found.Mode)
	require.Empty(t, found.Entries)
	found, err = c.SearchMemoryWith(ctx, client.SearchParams{ScopeID: "team", Q: "biling servise", Limit: 1, Mode: client.ModeSemantic})
	require.NoError(t, err)
	require.Equal(t, client.ModeSemantic, found.Mode)
	require.Len(t, found.Entries, 1)
	require.Contains(t, found.Entries[0].Content, "billing")
	require.Nil(t, found.Entries[0].Scores.FTS)
	_, err = c.SearchMemoryWith(ctx, client.SearchParams{ScopeID: "team", Q: "x", Mode: "vector"})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "mode", ae.Field())

	// History: the one revision, read back by number, and its diff from the empty Memory.
	revs, err := c.ListMemoryRevisions(ctx, "team", "", 0)
	require.NoError(t, err)
	require.Len(t, revs.Items, 1)
	require.Nil(t, revs.NextCursor)
	require.Equal(t, int64(1), revs.Items[0].Revision)
	require.Equal(t, int64(3), revs.Items[0].WindowThrough)
	require.Equal(t, flushOp, revs.Items[0].OperationID)
	require.Equal(t, &client.Eviction{Count: 0, EntryIDs: []int64{}}, revs.Items[0].Evicted)
	r1, err := c.GetMemoryRevision(ctx, "team", 1)
	require.NoError(t, err)
	require.Equal(t, m.Entries, r1.Entries)
	diff, err := c.DiffMemory(ctx, "team", -1, 0)
	require.NoError(t, err)
	require.Equal(t, int64(0), diff.From)
	require.Equal(t, int64(1), diff.To)
	require.Len(t, diff.Added, 3)
	require.Equal(t, m.Entries[2].EntryID, diff.Added[2].EntryID)
	cx, err := c.GetContext(ctx, "team", "billing", 50)
	require.NoError(t, err)
	require.LessOrEqual(t, cx.UsedTokens, 50)
	require.NotEmpty(t, cx.Items)
	require.Contains(t, cx.Items[0].Content, "billing")
	require.Equal(t, found.Entries[0].EntryID, cx.Items[0].EntryID, "the same entry, by id")
	require.Equal(t, client.ModeHybrid, cx.Mode)
	cx, err = c.GetContextWith(ctx, client.ContextParams{ScopeID: "team", Q: "biling", Mode: client.ModeSemantic})
	require.NoError(t, err)
	require.Equal(t, client.ModeSemantic, cx.Mode)
	require.Contains(t, cx.Items[0].Content, "billing")
	require.NotNil(t, cx.Items[0].Scores.Semantic)
	_, err = c.GetMemoryRevision(ctx, "team", 2)
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "revision_not_found", ae.Code)

	ops, err := c.ListOperations(ctx, client.ListOperationsParams{ScopeID: "team", Kind: client.KindMemoryFlush, Limit: 1})
	require.NoError(t, err)
	require.Len(t, ops.Items, 1)
	require.NotNil(t, ops.NextCursor)
	more, err := c.ListOperations(ctx, client.ListOperationsParams{ScopeID: "team", Cursor: *ops.NextCursor})
	require.NoError(t, err)
	require.NotEmpty(t, more.Items)
	_, err = c.ListOperations(ctx, client.ListOperationsParams{Cursor: "%%%"})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusUnprocessableEntity, ae.Status)

	cands, err := c.ListExperienceCandidates(ctx, client.ListCandidatesParams{ScopeID: "team"})
	require.NoError(t, err)
	require.Empty(t, cands.Items)

	// Incubation on demand: the task outcome proposes one lesson, pending review; then nothing is pending.
	_, err = c.CaptureSource(ctx, client.CaptureSourceRequest{ScopeID: "team",
		Content: "Retrying the flaky test twice hid a real race. Always run with -race.", Metadata: json.RawMessage(`{"kind":"task-outcome"}`)})
	require.NoError(t, err)
	statuses = nil
	inc, err := c.IncubateExperienceWith(ctx, "team", func(r client.OperationRecord) { statuses = append(statuses, r.Status) })
	require.NoError(t, err)
	require.Equal(t, client.FlushProcessed, inc.Status)
	require.Equal(t, int64(4), inc.ProcessedSourceCount)
	require.Equal(t, int64(1), inc.CandidateCount)
	require.NotNil(t, inc.OperationID)
	require.Equal(t, client.StatusQueued, statuses[0])
	incRec, err := c.GetOperation(ctx, *inc.OperationID)
	require.NoError(t, err)
	require.Equal(t, client.KindExperienceIncubation, incRec.Kind)
	cands, err = c.ListExperienceCandidates(ctx, client.ListCandidatesParams{ScopeID: "team"})
	require.NoError(t, err)
	require.Len(t, cands.Items, 1)
	require.Equal(t, "pending", cands.Items[0].Status)
	inc, err = c.IncubateExperience(ctx, "team")
	require.NoError(t, err)
	require.Equal(t, client.IncubateResult{Status: client.FlushIdle, PreviousCursor: 4, CurrentCursor: 4, HighWatermark: 4}, inc)

	require.Positive(t, hits[0].Load())
	require.Positive(t, hits[1].Load())
	require.InDelta(t, hits[0].Load(), hits[1].Load(), 1)
}

// TestMCPBehindAPIAuth checks /mcp is served behind the API's bearer token.
func TestMCPBehindAPIAuth(t *testing.T) {
	store := enginetest.Open(t, db.EngineSQLite)
	a, _ := apiReplicas(t, store, "tok")
	post := func(token string) int {
		req, err := http.NewRequest(http.MethodPost, a.URL+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, post(""))
	require.Equal(t, http.StatusOK, post("tok"))
}

// alternate returns an HTTP client that sends each request to a and b in turn.
func alternate(a, b *httptest.Server) (*http.Client, *[2]atomic.Int64) {
	hits := new([2]atomic.Int64)
	servers := [2]*httptest.Server{a, b}
	var next atomic.Int64
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		i := next.Add(1) % 2
		hits[i].Add(1)
		r = r.Clone(r.Context())
		host := servers[i].Listener.Addr().String()
		r.URL.Scheme, r.URL.Host, r.Host = "http", host, host
		return http.DefaultTransport.RoundTrip(r)
	})}, hits
}
