package memory_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

type idText struct {
	ID      int64
	Content string
}

func idsOf(es []db.MemoryEntry) []idText {
	out := make([]idText, 0, len(es))
	for _, e := range es {
		out = append(out, idText{e.EntryID, e.Content})
	}
	return out
}

// flushScope captures contents into scope and commits the next window through h.
func (e *env) flushScope(t *testing.T, h coordinator.Handler, scope string, contents ...string) db.WorkItem {
	t.Helper()
	ctx := context.Background()
	for _, c := range contents {
		_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: scope, Content: c})
		require.NoError(t, err)
	}
	_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest(scope))
	require.NoError(t, err)
	done := e.runOne(t, h)
	require.Equal(t, "processed", done.ResultCode)
	return done
}

// TestEntryIDsStayStable: with the local extractor, an entry keeps its id when a later window restates it, when it
// supersedes it (same id, new text) and when it is carried over untouched; a new entry gets the next id; each
// revision records the highest id and that nothing was evicted; the diff matches the entries by id.
func TestEntryIDsStayStable(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		e.flushScope(t, e.handler, "ids", "Staging uses PostgreSQL 16.", "Alice owns billing.", "The deploy window is Friday.")
		e.flushScope(t, e.handler, "ids", "alice owns billing", "Staging uses PostgreSQL 17.", "Releases ship on Tuesdays.")

		r := memory.Reader{Store: s}
		first, err := r.At(ctx, "ids", 1)
		require.NoError(t, err)
		require.Equal(t, []idText{{1, "Staging uses PostgreSQL 16."}, {2, "Alice owns billing."}, {3, "The deploy window is Friday."}},
			idsOf(first.Entries))
		m, err := r.Current(ctx, "ids")
		require.NoError(t, err)
		require.Equal(t, []idText{
			{1, "Staging uses PostgreSQL 17."},  // superseded: same id, new text
			{2, "Alice owns billing."},          // restated
			{3, "The deploy window is Friday."}, // carried over
			{4, "Releases ship on Tuesdays."},   // new
		}, idsOf(m.Entries))
		require.JSONEq(t, `[5]`, string(m.Entries[0].SourcePositions), "a supersede keeps only the new Source")
		require.JSONEq(t, `[2,4]`, string(m.Entries[1].SourcePositions), "a restatement adds its Source")
		require.Equal(t, []int64{}, m.Evicted)
		rev, err := s.MemoryRevisionLatest(ctx, "ids")
		require.NoError(t, err)
		require.EqualValues(t, 4, rev.LastEntryID)
		require.JSONEq(t, `[]`, string(rev.EvictedEntryIDs))

		d, err := r.Diff(ctx, "ids", 1, 2)
		require.NoError(t, err)
		require.Equal(t, []idText{{4, "Releases ship on Tuesdays."}}, idsOf(d.Added))
		require.Empty(t, d.Removed)
		require.Len(t, d.Changed, 2)
		require.Equal(t, [2]idText{{1, "Staging uses PostgreSQL 16."}, {1, "Staging uses PostgreSQL 17."}},
			[2]idText{{d.Changed[0].From.EntryID, d.Changed[0].From.Content}, {d.Changed[0].To.EntryID, d.Changed[0].To.Content}})
		require.EqualValues(t, 2, d.Changed[1].To.EntryID)
	})
}

// TestEvictionIsRecorded: when a window takes the revision past the entry cap, the least recently confirmed entries
// leave and the revision records their ids; the readers return them.
func TestEvictionIsRecorded(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		var lines []string
		for i := 1; i <= provider.MaxMemoryEntries-2; i++ {
			lines = append(lines, fmt.Sprintf("Fact number %d about the cap is true.", i))
		}
		e.flushScope(t, e.handler, "cap", strings.Join(lines, "\n"))
		e.flushScope(t, e.handler, "cap", "Fact number 1 about the cap is true.\nAlpha is a fresh fact.\nBeta is a fresh fact.\nGamma is a fresh fact.\nDelta is a fresh fact.")

		r := memory.Reader{Store: s}
		m, err := r.Current(ctx, "cap")
		require.NoError(t, err)
		require.Equal(t, provider.MaxMemoryEntries, len(m.Entries))
		require.Equal(t, []int64{2, 3}, m.Evicted, "the two least recently confirmed; entry 1 was restated")
		require.Equal(t, []idText{{1, "Fact number 1 about the cap is true."}, {4, "Fact number 4 about the cap is true."}},
			idsOf(m.Entries[:2]))
		require.Equal(t, idText{provider.MaxMemoryEntries + 2, "Delta is a fresh fact."}, idsOf(m.Entries)[provider.MaxMemoryEntries-1])
		revs, err := r.Revisions(ctx, "cap", 0, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 3}, memory.EvictedIDs(revs[0]))
		require.Equal(t, []int64{}, memory.EvictedIDs(revs[1]))
		old, err := r.At(ctx, "cap", 1)
		require.NoError(t, err)
		require.Equal(t, []int64{}, old.Evicted)
		d, err := r.Diff(ctx, "cap", 1, 2)
		require.NoError(t, err)
		require.Equal(t, []idText{{2, "Fact number 2 about the cap is true."}, {3, "Fact number 3 about the cap is true."}}, idsOf(d.Removed))
		require.Equal(t, 4, len(d.Added))
	})
}

// fakeModel is an OpenAI-compatible chat-completions server that answers each call with the next scripted model
// output and keeps the user messages it was sent.
type fakeModel struct {
	mu      sync.Mutex
	answers []string
	prompts []string
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, req.Messages[len(req.Messages)-1].Content)
	answer := f.answers[0]
	f.answers = f.answers[1:]
	out, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": answer}}}})
	_, _ = w.Write(out)
}

// TestOpenAIOperationsCommit: a flush through an OpenAI-compatible provider (a fake server) applies the model's
// add, update and remove operations to the current revision: the updated entry keeps its id with the new text, the
// removed one is gone from the next revision, the added one gets the next id; the model is shown the entries with
// their ids. An answer naming an unknown id, or citing a position outside the window, fails the window with
// provider/invalid_output and writes nothing, and neither the error nor the attempt row carries content.
func TestOpenAIOperationsCommit(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		model := &fakeModel{answers: []string{
			`{"operations":[` +
				`{"op":"add","entry_id":null,"content":"Staging uses PostgreSQL 16.","source_positions":[1]},` +
				`{"op":"add","entry_id":null,"content":"Deploys are frozen.","source_positions":[2]},` +
				`{"op":"add","entry_id":null,"content":"Alice owns billing.","source_positions":[2]}]}`,
			`{"operations":[` +
				`{"op":"update","entry_id":1,"content":"Staging uses PostgreSQL 17.","source_positions":[3]},` +
				`{"op":"remove","entry_id":2,"content":null,"source_positions":[3]},` +
				`{"op":"update","entry_id":3,"content":"Billing moved to the finance team.","source_positions":[3]},` +
				`{"op":"add","entry_id":null,"content":"Releases ship on Tuesdays.","source_positions":[3]}]}`,
			`{"operations":[{"op":"update","entry_id":2,"content":"SECRET-CANARY-9d1 is back.","source_positions":[4]}]}`,
			`{"operations":[{"op":"add","entry_id":null,"content":"SECRET-CANARY-9d1 again.","source_positions":[1]}]}`,
		}}
		srv := httptest.NewServer(model)
		defer srv.Close()
		oa, err := provider.NewOpenAI(provider.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second})
		require.NoError(t, err)
		e := newEnv(t, s)
		h := &memory.Handler{Store: s, Provider: oa}
		e.flushScope(t, h, "ops", "Staging runs PostgreSQL 16.", "Deploys are frozen; Alice owns billing.")
		e.flushScope(t, h, "ops", "Staging moved to PostgreSQL 17, the freeze is over, finance owns billing, releases ship on Tuesdays.")

		r := memory.Reader{Store: s}
		m, err := r.Current(ctx, "ops")
		require.NoError(t, err)
		require.EqualValues(t, 2, m.Revision)
		require.Equal(t, []idText{{1, "Staging uses PostgreSQL 17."}, {3, "Billing moved to the finance team."}, {4, "Releases ship on Tuesdays."}},
			idsOf(m.Entries))
		require.JSONEq(t, `[3]`, string(m.Entries[0].SourcePositions))
		require.JSONEq(t, `[3]`, string(m.Entries[1].SourcePositions))
		var shown struct {
			Memory []struct {
				EntryID int64  `json:"entry_id"`
				Content string `json:"content"`
			} `json:"memory"`
		}
		require.NoError(t, json.Unmarshal([]byte(model.prompts[1]), &shown))
		require.Len(t, shown.Memory, 3)
		require.EqualValues(t, 2, shown.Memory[1].EntryID)
		require.Equal(t, "Deploys are frozen.", shown.Memory[1].Content)

		d, err := r.Diff(ctx, "ops", 1, 2)
		require.NoError(t, err)
		require.Equal(t, []idText{{2, "Deploys are frozen."}}, idsOf(d.Removed))
		require.Equal(t, []idText{{4, "Releases ship on Tuesdays."}}, idsOf(d.Added))
		require.Len(t, d.Changed, 2, "matched by id: a rewording with nothing in common is still the same entry")
		require.Equal(t, [2]idText{{3, "Alice owns billing."}, {3, "Billing moved to the finance team."}},
			[2]idText{{d.Changed[1].From.EntryID, d.Changed[1].From.Content}, {d.Changed[1].To.EntryID, d.Changed[1].To.Content}})

		// Entry 2 was removed: naming it now is an unknown id. Then a position outside the window.
		_, err = e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "ops", Content: "Deploys are frozen again."})
		require.NoError(t, err)
		_, err = e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("ops"))
		require.NoError(t, err)
		for range 2 {
			res, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "w", Supported: coordinator.Supported{h.Kind(): h.PayloadVersions()},
				Slots: 1, Lease: time.Minute})
			require.NoError(t, err)
			require.Len(t, res.Claims, 1)
			_, err = h.Prepare(ctx, res.Claims[0].Item)
			require.Equal(t, coordinator.Failure{Category: coordinator.CategoryProvider, Code: coordinator.CodeInvalidOutput, Retryable: true},
				coordinator.Classify(err))
			require.NotContains(t, err.Error(), "CANARY")
			_, err = e.ledger.Fail(ctx, res.Claims[0], coordinator.Classify(err), 0)
			require.NoError(t, err)
			attempts, err := e.ledger.Attempts(ctx, res.Claims[0].Item.WorkID)
			require.NoError(t, err)
			last := attempts[len(attempts)-1]
			require.Equal(t, [2]string{"provider", "invalid_output"}, [2]string{last.ErrorCategory, last.ErrorCode})
		}
		latest, err := s.MemoryRevisionLatest(ctx, "ops")
		require.NoError(t, err)
		require.EqualValues(t, 2, latest.Revision, "an invalid answer commits nothing")
	})
}

// TestEntriesWrittenBeforeIDs: a database migrated through the schema before entry ids, holding a revision written
// then, is migrated; the next flush gives the old entries ids in entry order (they read as 0 before) and keeps them.
// A revision an older build writes afterwards (no ids, no eviction record) does not make ids be given out twice, and
// the flush after it gives its entries back the ids of the same facts.
func TestEntriesWrittenBeforeIDs(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		ctx := context.Background()
		u := enginetest.ParseURL(t, enginetest.NewDatabase(t, engine))
		sqlDB := enginetest.OpenSQLDB(t, u)
		s := enginetest.OpenStore(t, u)
		embedded, err := migrate.Dir(engine)
		require.NoError(t, err)
		files, err := embedded.Files()
		require.NoError(t, err)
		before := &atlasmigrate.MemDir{}
		for _, f := range files {
			if f.Version() < "20261209000000" {
				require.NoError(t, before.WriteFile(f.Name(), f.Bytes()))
			}
		}
		sum, err := before.Checksum()
		require.NoError(t, err)
		require.NoError(t, atlasmigrate.WriteSumFile(before, sum))
		_, err = migrate.Apply(ctx, engine, sqlDB, s, "before-ids", migrate.WithDir(before))
		require.NoError(t, err)

		e := newEnv(t, s)
		for _, c := range []string{"Staging uses PostgreSQL 16.", "Alice owns billing."} {
			_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "old", Content: c})
			require.NoError(t, err)
		}
		// Revision 1 as the build before ids wrote it (its columns only); the journal is not consumed yet, so the
		// next window restates both facts.
		olderBuildRevision(t, sqlDB, engine, "old", 1, "Staging uses PostgreSQL 16.", "Alice owns billing.")
		_, err = migrate.Apply(ctx, engine, sqlDB, s, "ids")
		require.NoError(t, err)

		r := memory.Reader{Store: s}
		m, err := r.Current(ctx, "old")
		require.NoError(t, err)
		require.Equal(t, []idText{{0, "Staging uses PostgreSQL 16."}, {0, "Alice owns billing."}}, idsOf(m.Entries), "no ids yet")
		require.Nil(t, m.Evicted, "not recorded")

		e.flushScope(t, e.handler, "old", "Staging uses PostgreSQL 17.", "Releases ship on Tuesdays.")
		m, err = r.Current(ctx, "old")
		require.NoError(t, err)
		require.Equal(t, []idText{{1, "Staging uses PostgreSQL 17."}, {2, "Alice owns billing."}, {3, "Releases ship on Tuesdays."}},
			idsOf(m.Entries))
		d, err := r.Diff(ctx, "old", 1, 2)
		require.NoError(t, err)
		require.Equal(t, 1, len(d.Changed), "revision 1 has no ids: matched by text and subject, as before")
		require.Equal(t, "Staging uses PostgreSQL 17.", d.Changed[0].To.Content)
		require.Equal(t, []idText{{3, "Releases ship on Tuesdays."}}, idsOf(d.Added))

		// An older build commits revision 3 (it dropped the Tuesday fact and renumbered), then this build flushes.
		olderBuildRevision(t, sqlDB, engine, "old", 3, "Staging uses PostgreSQL 17.", "Alice owns billing.")
		e.flushScope(t, e.handler, "old", "Bob owns payroll.")
		m, err = r.Current(ctx, "old")
		require.NoError(t, err)
		require.Equal(t, []idText{{1, "Staging uses PostgreSQL 17."}, {2, "Alice owns billing."}, {4, "Bob owns payroll."}},
			idsOf(m.Entries), "the same facts take their ids back; id 3 is not given out again")
		rev, err := s.MemoryRevisionLatest(ctx, "old")
		require.NoError(t, err)
		require.EqualValues(t, 4, rev.LastEntryID)
		d, err = r.Diff(ctx, "old", 2, 4)
		require.NoError(t, err)
		require.Equal(t, []idText{{3, "Releases ship on Tuesdays."}}, idsOf(d.Removed))
		require.Equal(t, []idText{{4, "Bob owns payroll."}}, idsOf(d.Added))
	})
}

// olderBuildRevision writes a revision and its entries with the columns a build before entry ids knew (entry i
// cites position i).
func olderBuildRevision(t *testing.T, sqlDB *sql.DB, engine db.Engine, scope string, revision int64, contents ...string) {
	t.Helper()
	ctx := context.Background()
	var now any = time.Now().UTC().Truncate(time.Microsecond)
	ph := func(n int) string { return "?" }
	switch engine {
	case db.EngineSQLite:
		now = time.Now().UnixMicro()
	case db.EnginePostgres:
		ph = func(n int) string { return fmt.Sprintf("$%d", n) }
	}
	list := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = ph(i + 1)
		}
		return strings.Join(out, ", ")
	}
	_, err := sqlDB.ExecContext(ctx, "INSERT INTO pc_memory_revisions (scope_id, revision, work_id, cursor_generation, "+
		"window_after, window_through, entry_count, created_at) VALUES ("+list(8)+")",
		scope, revision, uuid.NewString(), 1, 0, 0, len(contents), now)
	require.NoError(t, err)
	for i, c := range contents {
		_, err := sqlDB.ExecContext(ctx, "INSERT INTO pc_memory_entries (scope_id, revision, entry_no, content, "+
			"source_positions, created_at) VALUES ("+list(6)+")", scope, revision, i+1, c, []byte(fmt.Sprintf("[%d]", i+1)), now)
		require.NoError(t, err)
	}
}
