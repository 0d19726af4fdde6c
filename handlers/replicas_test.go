package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// replica is one API server with its own connection pool on a shared database.
func replica(t *testing.T, s db.Store) *httptest.Server {
	l := coordinator.NewLedger(s)
	srv := httptest.NewServer(handlers.New(handlers.Deps{
		Journal: sources.NewJournal(s), Flusher: &memory.Flusher{Ledger: l, Consumer: memory.Consumer(5)},
		Memory: memory.Reader{Store: s}, Experience: experience.Reviews{Store: s}, Ledger: l, Store: s,
		FlushDefaultWait: time.Second, FlushMaxWait: 5 * time.Second, Role: "api", Logger: zerolog.Nop(),
	}))
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, method, url string, body any, header map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

// TestTwoReplicasShareOneDatabase: capture on A, flush async on B, follow the operation on A — on PostgreSQL and
// MySQL, with a worker on its own pool (distributed roles share nothing but the database).
func TestTwoReplicasShareOneDatabase(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		if engine == db.EngineSQLite {
			t.Skip("replicas share a PostgreSQL or MySQL database")
		}
		u := enginetest.MigratedDatabase(t, engine)
		a, b := replica(t, enginetest.OpenStore(t, u)), replica(t, enginetest.OpenStore(t, u))
		ws := enginetest.OpenStore(t, u)
		w, err := coordinator.NewWorker(coordinator.NewLedger(ws), coordinator.WorkerConfig{Owner: "worker-1", Concurrency: 2,
			Poll: 20 * time.Millisecond, Logger: zerolog.Nop()}, &memory.Handler{Store: ws, Provider: provider.NewLocal()})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() { cancel(); <-done }() //nolint:errcheck // Run returns the cancellation, not the subject here

		for i, text := range []string{"Alpha ships on Mondays.", "Beta needs review."} {
			code, body, _ := call(t, http.MethodPost, a.URL+"/v1/sources", map[string]any{"scope_id": "shared", "content": text}, nil)
			require.Equal(t, http.StatusCreated, code, "%v", body)
			require.EqualValues(t, i+1, body["journal_position"])
		}
		code, body, hdr := call(t, http.MethodPost, b.URL+"/v1/memory/flush", map[string]any{"scope_id": "shared"},
			map[string]string{"Prefer": "respond-async"})
		require.Equal(t, http.StatusAccepted, code, "%v", body)
		id := body["operation_id"].(string)
		require.Equal(t, "/v1/operations/"+id, hdr.Get("Location"))
		require.Equal(t, "2", hdr.Get("Retry-After"))

		deadline := time.Now().Add(15 * time.Second)
		for {
			code, op, _ := call(t, http.MethodGet, a.URL+"/v1/operations/"+id, nil, nil)
			require.Equal(t, http.StatusOK, code)
			if op["status"] == "succeeded" {
				require.Equal(t, "memory_flush", op["kind"])
				result := op["result"].(map[string]any)
				require.EqualValues(t, 2, result["current_cursor"])
				break
			}
			require.True(t, time.Now().Before(deadline), "operation did not finish: %v", op)
			time.Sleep(20 * time.Millisecond)
		}
		code, mem, _ := call(t, http.MethodGet, b.URL+"/v1/memory?scope_id=shared", nil, nil)
		require.Equal(t, http.StatusOK, code)
		require.Len(t, mem["entries"], 2)
	})
}
