package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// extract runs the local extractor and applies its operations (ApplyOps), giving the existing entries without an
// id the ids 1, 2, … first; new entries get the next ids.
func extract(t *testing.T, req ExtractMemoryRequest) []MemoryEntry {
	t.Helper()
	req.Existing = withIDs(req.Existing)
	resp, err := NewLocal().ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	applied, err := ApplyOps(req, resp.Ops, int64(len(req.Existing)))
	require.NoError(t, err)
	return applied.Entries
}

// withIDs returns a copy of entries with ids 1, 2, … where they have none.
func withIDs(entries []MemoryEntry) []MemoryEntry {
	out := make([]MemoryEntry, len(entries))
	for i, e := range entries {
		if e.ID == 0 {
			e.ID = int64(i + 1)
		}
		out[i] = e
	}
	return out
}

func TestLocalName(t *testing.T) {
	require.Equal(t, "local", NewLocal().Name())
}

func TestLocalExtractMemoryDeterministic(t *testing.T) {
	req := ExtractMemoryRequest{
		ScopeID: "scope-a",
		Existing: []MemoryEntry{
			{Content: "The service uses Go.", SourcePositions: []int64{1}},
		},
		Window: []Source{
			{Position: 3, Type: "message", Content: "Deploys happen on Fridays.\n- The team prefers SQLite!  Ok."},
			{Position: 2, Type: "message", Content: "   the   SERVICE uses go   \n\n Tests   run in CI. x"},
		},
	}
	req.Existing = withIDs(req.Existing)
	l := NewLocal()
	first, err := l.ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	for range 5 {
		again, err := l.ExtractMemory(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
	require.Equal(t, []MemoryOp{
		{Op: OpUpdate, EntryID: 1, Content: "The service uses Go.", SourcePositions: []int64{2}},
		{Op: OpAdd, Content: "Tests run in CI.", SourcePositions: []int64{2}},
		{Op: OpAdd, Content: "Deploys happen on Fridays.", SourcePositions: []int64{3}},
		{Op: OpAdd, Content: "The team prefers SQLite!", SourcePositions: []int64{3}},
	}, first.Ops, "a restatement is an update keeping the text; new facts are adds")
	require.Equal(t, []MemoryEntry{
		{ID: 1, Content: "The service uses Go.", SourcePositions: []int64{1, 2}},
		{ID: 2, Content: "Tests run in CI.", SourcePositions: []int64{2}},
		{ID: 3, Content: "Deploys happen on Fridays.", SourcePositions: []int64{3}},
		{ID: 4, Content: "The team prefers SQLite!", SourcePositions: []int64{3}},
	}, extract(t, req), "journal order, short fragments dropped, bullets trimmed, duplicates merged")
}

func TestLocalExtractMemoryDedupe(t *testing.T) {
	existing := []MemoryEntry{
		{Content: "Alpha fact here", SourcePositions: []int64{7, 3, 3}},
		{Content: "beta fact here.", SourcePositions: []int64{4}},
	}
	req := ExtractMemoryRequest{
		Existing: existing,
		Window: []Source{
			{Position: 8, Content: "ALPHA FACT HERE. Gamma fact here."},
			{Position: 9, Content: "gamma   fact here\nBeta Fact Here"},
			{Position: 10, Content: "alpha fact here"},
		},
	}
	require.Equal(t, []MemoryEntry{
		{ID: 1, Content: "Alpha fact here", SourcePositions: []int64{3, 7, 8, 10}},
		{ID: 2, Content: "beta fact here.", SourcePositions: []int64{4, 9}},
		{ID: 3, Content: "Gamma fact here.", SourcePositions: []int64{8, 9}},
	}, extract(t, req))
	// The input is not modified.
	require.Equal(t, []int64{7, 3, 3}, existing[0].SourcePositions)
	require.Equal(t, []int64{4}, existing[1].SourcePositions)
}

func TestLocalExtractMemoryEmptyWindow(t *testing.T) {
	resp, err := NewLocal().ExtractMemory(context.Background(), ExtractMemoryRequest{})
	require.NoError(t, err)
	require.NotNil(t, resp.Ops)
	require.Empty(t, resp.Ops)
	existing := withIDs([]MemoryEntry{{Content: "Kept as it is.", SourcePositions: []int64{1}}})
	applied, err := ApplyOps(ExtractMemoryRequest{Existing: existing}, resp.Ops, 1)
	require.NoError(t, err)
	require.Equal(t, Applied{Entries: existing, Evicted: []int64{}, LastID: 1}, applied)
}

func TestLocalExtractMemoryCaps(t *testing.T) {
	var existing []MemoryEntry
	for i := range MaxMemoryEntries {
		existing = append(existing, MemoryEntry{Content: fmt.Sprintf("existing fact %d", i), SourcePositions: []int64{int64(i + 1)}})
	}
	long := strings.Repeat("word ", 400) // 2,000 bytes, no sentence end
	req := ExtractMemoryRequest{
		Existing: existing,
		Window: []Source{
			{Position: 1001, Content: "new fact one.\nnew fact two."},
			{Position: 1002, Content: long},
		},
	}
	entries := extract(t, req)
	require.Len(t, entries, MaxMemoryEntries)
	require.Equal(t, "existing fact 3", entries[0].Content, "the three oldest are dropped")
	n := len(entries)
	require.Equal(t, "new fact one.", entries[n-3].Content)
	require.Equal(t, "new fact two.", entries[n-2].Content)
	last := entries[n-1]
	require.LessOrEqual(t, len(last.Content), MaxEntryBytes)
	require.True(t, strings.HasPrefix(long, last.Content))
	require.Equal(t, []int64{1002}, last.SourcePositions)
}

func TestLocalExtractMemoryUTF8Safety(t *testing.T) {
	// 999 ASCII bytes then a 4-byte rune: cutting at 1,000 bytes must not split it.
	content := strings.Repeat("a", 999) + "😀" + strings.Repeat("é", 10)
	invalid := "broken \xff\xfe bytes here"
	entries := extract(t, ExtractMemoryRequest{
		Window: []Source{{Position: 1, Content: content}, {Position: 2, Content: invalid}},
	})
	require.Len(t, entries, 2)
	require.Equal(t, strings.Repeat("a", 999), entries[0].Content)
	for _, e := range entries {
		require.True(t, utf8.ValidString(e.Content))
		require.LessOrEqual(t, len(e.Content), MaxEntryBytes)
	}

	for _, n := range []int{0, 1, 2, 3, 4, 5, 119, 120, 121} {
		s := strings.Repeat("日本", 50)
		got := truncateUTF8(s, n)
		require.True(t, utf8.ValidString(got))
		require.LessOrEqual(t, len(got), n)
	}
}

func TestLocalIncubateExperience(t *testing.T) {
	longFirst := strings.Repeat("é", 100) + ". Then more."
	req := IncubateRequest{
		ScopeID: "scope-a",
		Window: []Source{
			{Position: 12, Type: "task-outcome", Content: "ignored content", Metadata: map[string]any{
				"kind": "task-outcome", "title": "  Use   retries ", "lesson": "Retry idempotent calls with backoff.",
			}},
			{Position: 10, Type: "task-outcome", Content: "  Migration failed.   Run   schema checks before deploy.\n", Metadata: map[string]any{"kind": "task-outcome", "title": 42}},
			{Position: 11, Type: "task-outcome", Content: longFirst},
			{Position: 13, Type: "task-outcome", Content: "   "},
		},
	}
	l := NewLocal()
	resp, err := l.IncubateExperience(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Candidates, 3)
	require.Equal(t, Lesson{Title: "Migration failed.", Lesson: "Migration failed. Run schema checks before deploy.", CitedPositions: []int64{10}}, resp.Candidates[0])
	require.Equal(t, []int64{11}, resp.Candidates[1].CitedPositions)
	require.LessOrEqual(t, len(resp.Candidates[1].Title), MaxTitleBytes)
	require.True(t, utf8.ValidString(resp.Candidates[1].Title))
	require.Equal(t, strings.Repeat("é", 60), resp.Candidates[1].Title)
	require.Equal(t, Lesson{Title: "Use retries", Lesson: "Retry idempotent calls with backoff.", CitedPositions: []int64{12}}, resp.Candidates[2])

	again, err := l.IncubateExperience(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, resp, again)

	big, err := l.IncubateExperience(context.Background(), IncubateRequest{Window: []Source{{Position: 1, Content: strings.Repeat("ü", 1500)}}})
	require.NoError(t, err)
	require.Len(t, big.Candidates, 1)
	require.LessOrEqual(t, len(big.Candidates[0].Lesson), MaxLessonBytes)
	require.True(t, utf8.ValidString(big.Candidates[0].Lesson))
	require.LessOrEqual(t, len(big.Candidates[0].Title), MaxTitleBytes)
}

// TestLocalExtractMemorySupersedes: a restated subject replaces its entry in place with the new text and the new
// Source's positions (numbers in any script, or a changed last word of a longer fact); different subjects and
// short facts are kept side by side.
func TestLocalExtractMemorySupersedes(t *testing.T) {
	existing := []MemoryEntry{
		{Content: "Staging uses PostgreSQL 16.", SourcePositions: []int64{1}},
		{Content: "用户每天早上八点开会。", SourcePositions: []int64{2}},
		{Content: "The deploy script lives in ops/deploy.sh.", SourcePositions: []int64{3}},
		{Content: "Alice owns billing.", SourcePositions: []int64{4}},
	}
	entries := extract(t, ExtractMemoryRequest{Existing: existing, Window: []Source{
		{Position: 5, Content: "Staging uses PostgreSQL 17. 用户每天早上九点开会。"},
		{Position: 6, Content: "The deploy script lives in ops/release.sh. Alice owns payroll."},
	}})
	require.Equal(t, []MemoryEntry{
		{ID: 1, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{5}},
		{ID: 2, Content: "用户每天早上九点开会。", SourcePositions: []int64{5}},
		{ID: 3, Content: "The deploy script lives in ops/release.sh.", SourcePositions: []int64{6}},
		{ID: 4, Content: "Alice owns billing.", SourcePositions: []int64{4}},
		{ID: 5, Content: "Alice owns payroll.", SourcePositions: []int64{6}},
	}, entries, "a superseded entry keeps its id")
	require.Equal(t, "Staging uses PostgreSQL 16.", existing[0].Content, "the input is not modified")

	// Within one window the later statement wins; numbers inside a spaced sentence name different things.
	entries = extract(t, ExtractMemoryRequest{Window: []Source{
		{Position: 1, Content: "Snapshot retention is 7."}, {Position: 2, Content: "Snapshot retention is 30."},
		{Position: 3, Content: "Ticket 42 is blocked."}, {Position: 4, Content: "Ticket 43 is blocked."},
	}})
	require.Equal(t, []MemoryEntry{
		{ID: 1, Content: "Snapshot retention is 30.", SourcePositions: []int64{2}},
		{ID: 2, Content: "Ticket 42 is blocked.", SourcePositions: []int64{3}},
		{ID: 3, Content: "Ticket 43 is blocked.", SourcePositions: []int64{4}},
	}, entries)
}

// TestLocalExtractMemoryEvictsLeastRecentlyConfirmed: past the cap the entries dropped are those confirmed least
// recently, not the oldest: an old entry the window restates stays.
func TestLocalExtractMemoryEvictsLeastRecentlyConfirmed(t *testing.T) {
	var existing []MemoryEntry
	for i := range MaxMemoryEntries {
		existing = append(existing, MemoryEntry{Content: fmt.Sprintf("Existing fact number %c here", 'A'+rune(i%26)) + strings.Repeat("x", i/26),
			SourcePositions: []int64{int64(i + 1)}})
	}
	first := existing[0].Content
	req := ExtractMemoryRequest{Existing: withIDs(existing), Window: []Source{
		{Position: 1001, Content: first + ".\nA brand new fact."},
	}}
	resp, err := NewLocal().ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	applied, err := ApplyOps(req, resp.Ops, MaxMemoryEntries)
	require.NoError(t, err)
	require.Len(t, applied.Entries, MaxMemoryEntries)
	require.Equal(t, first, applied.Entries[0].Content, "restated, so confirmed most recently")
	require.EqualValues(t, 1, applied.Entries[0].ID)
	require.Equal(t, []int64{1, 1001}, applied.Entries[0].SourcePositions)
	require.Equal(t, existing[2].Content, applied.Entries[1].Content, "the second oldest, never restated, was dropped")
	require.Equal(t, []int64{2}, applied.Evicted, "the eviction names the dropped entry's id")
	require.Equal(t, "A brand new fact.", applied.Entries[MaxMemoryEntries-1].Content)
	require.EqualValues(t, MaxMemoryEntries+1, applied.Entries[MaxMemoryEntries-1].ID)
	require.EqualValues(t, MaxMemoryEntries+1, applied.LastID)
}

// TestLocalExtractMemorySupersedesDespiteQualifiers: a correction with a time qualifier ("now", "as of …", "these
// days", 现在, 目前 …) before, inside or after it states the same subject as the fact it corrects, so it replaces
// that entry instead of standing beside it; qualifiers do not make different subjects the same.
func TestLocalExtractMemorySupersedesDespiteQualifiers(t *testing.T) {
	cases := []struct {
		old, new   string
		supersedes bool
	}{
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17.", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 now.", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 today.", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17, as of today.", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 as of March 2026.", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 (as of v2.3).", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 these days.", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 already!", true},
		{"Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17 at the moment.", true},
		{"Staging uses PostgreSQL 16.", "Staging now uses PostgreSQL 17.", true},
		{"Staging uses PostgreSQL 16.", "Staging currently uses PostgreSQL 17.", true},
		{"Staging uses PostgreSQL 16.", "Currently, staging uses PostgreSQL 17.", true},
		{"Staging uses PostgreSQL 16.", "As of today, staging uses PostgreSQL 17.", true},
		{"Staging uses PostgreSQL 16 now.", "Staging uses PostgreSQL 17.", true},
		{"Snapshot retention is 7.", "Snapshot retention is 30 now.", true},
		{"The deploy script lives in ops/deploy.sh.", "The deploy script lives in ops/release.sh now.", true},
		{"Alice owns billing.", "Alice owns billing now.", true},
		{"用户每天早上八点开会。", "用户现在每天早上九点开会。", true},
		{"用户每天早上八点开会。", "目前用户每天早上九点开会。", true},
		{"数据库版本是16。", "数据库版本现在是17了。", true},
		{"数据库版本是16。", "截至目前，数据库版本是17。", true},
		{"预发环境使用 PostgreSQL 16。", "预发环境现在使用 PostgreSQL 17。", true},
		// Qualifiers do not merge different subjects.
		{"Ticket 42 is blocked.", "Ticket 43 is blocked now.", false},
		{"Alice owns billing.", "Alice owns payroll now.", false},
		{"Staging uses PostgreSQL 16.", "Production uses PostgreSQL 17 now.", false},
		{"The cache holds 10 items.", "Now the queue holds 12 items today.", false},
	}
	for _, c := range cases {
		t.Run(c.new, func(t *testing.T) {
			entries := extract(t, ExtractMemoryRequest{
				Existing: []MemoryEntry{{Content: c.old, SourcePositions: []int64{1}}},
				Window:   []Source{{Position: 2, Content: c.new}},
			})
			if c.supersedes {
				require.Equal(t, []MemoryEntry{{ID: 1, Content: c.new, SourcePositions: []int64{2}}}, entries)
			} else {
				require.Len(t, entries, 2, "different subjects stay side by side")
			}
		})
	}
}
