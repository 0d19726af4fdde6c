package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

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
	l := NewLocal()
	first, err := l.ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	for range 5 {
		again, err := l.ExtractMemory(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
	require.Equal(t, []MemoryEntry{
		{Content: "The service uses Go.", SourcePositions: []int64{1, 2}},
		{Content: "Tests run in CI.", SourcePositions: []int64{2}},
		{Content: "Deploys happen on Fridays.", SourcePositions: []int64{3}},
		{Content: "The team prefers SQLite!", SourcePositions: []int64{3}},
	}, first.Entries, "journal order, short fragments dropped, bullets trimmed, duplicates merged")
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
	resp, err := NewLocal().ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, []MemoryEntry{
		{Content: "Alpha fact here", SourcePositions: []int64{3, 7, 8, 10}},
		{Content: "beta fact here.", SourcePositions: []int64{4, 9}},
		{Content: "Gamma fact here.", SourcePositions: []int64{8, 9}},
	}, resp.Entries)
	// The input is not modified.
	require.Equal(t, []int64{7, 3, 3}, existing[0].SourcePositions)
	require.Equal(t, []int64{4}, existing[1].SourcePositions)
}

func TestLocalExtractMemoryEmptyWindow(t *testing.T) {
	resp, err := NewLocal().ExtractMemory(context.Background(), ExtractMemoryRequest{})
	require.NoError(t, err)
	require.NotNil(t, resp.Entries)
	require.Empty(t, resp.Entries)
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
	resp, err := NewLocal().ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Entries, MaxMemoryEntries)
	require.Equal(t, "existing fact 3", resp.Entries[0].Content, "the three oldest are dropped")
	n := len(resp.Entries)
	require.Equal(t, "new fact one.", resp.Entries[n-3].Content)
	require.Equal(t, "new fact two.", resp.Entries[n-2].Content)
	last := resp.Entries[n-1]
	require.LessOrEqual(t, len(last.Content), MaxEntryBytes)
	require.True(t, strings.HasPrefix(long, last.Content))
	require.Equal(t, []int64{1002}, last.SourcePositions)
}

func TestLocalExtractMemoryUTF8Safety(t *testing.T) {
	// 999 ASCII bytes then a 4-byte rune: cutting at 1,000 bytes must not split it.
	content := strings.Repeat("a", 999) + "😀" + strings.Repeat("é", 10)
	invalid := "broken \xff\xfe bytes here"
	resp, err := NewLocal().ExtractMemory(context.Background(), ExtractMemoryRequest{
		Window: []Source{{Position: 1, Content: content}, {Position: 2, Content: invalid}},
	})
	require.NoError(t, err)
	require.Len(t, resp.Entries, 2)
	require.Equal(t, strings.Repeat("a", 999), resp.Entries[0].Content)
	for _, e := range resp.Entries {
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
	resp, err := NewLocal().ExtractMemory(context.Background(), ExtractMemoryRequest{Existing: existing, Window: []Source{
		{Position: 5, Content: "Staging uses PostgreSQL 17. 用户每天早上九点开会。"},
		{Position: 6, Content: "The deploy script lives in ops/release.sh. Alice owns payroll."},
	}})
	require.NoError(t, err)
	require.Equal(t, []MemoryEntry{
		{Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{5}},
		{Content: "用户每天早上九点开会。", SourcePositions: []int64{5}},
		{Content: "The deploy script lives in ops/release.sh.", SourcePositions: []int64{6}},
		{Content: "Alice owns billing.", SourcePositions: []int64{4}},
		{Content: "Alice owns payroll.", SourcePositions: []int64{6}},
	}, resp.Entries)
	require.Equal(t, "Staging uses PostgreSQL 16.", existing[0].Content, "the input is not modified")

	// Within one window the later statement wins; numbers inside a spaced sentence name different things.
	resp, err = NewLocal().ExtractMemory(context.Background(), ExtractMemoryRequest{Window: []Source{
		{Position: 1, Content: "Snapshot retention is 7."}, {Position: 2, Content: "Snapshot retention is 30."},
		{Position: 3, Content: "Ticket 42 is blocked."}, {Position: 4, Content: "Ticket 43 is blocked."},
	}})
	require.NoError(t, err)
	require.Equal(t, []MemoryEntry{
		{Content: "Snapshot retention is 30.", SourcePositions: []int64{2}},
		{Content: "Ticket 42 is blocked.", SourcePositions: []int64{3}},
		{Content: "Ticket 43 is blocked.", SourcePositions: []int64{4}},
	}, resp.Entries)
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
	resp, err := NewLocal().ExtractMemory(context.Background(), ExtractMemoryRequest{Existing: existing, Window: []Source{
		{Position: 1001, Content: first + ".\nA brand new fact."},
	}})
	require.NoError(t, err)
	require.Len(t, resp.Entries, MaxMemoryEntries)
	require.Equal(t, first, resp.Entries[0].Content, "restated, so confirmed most recently")
	require.Equal(t, []int64{1, 1001}, resp.Entries[0].SourcePositions)
	require.Equal(t, existing[2].Content, resp.Entries[1].Content, "the second oldest, never restated, was dropped")
	require.Equal(t, "A brand new fact.", resp.Entries[MaxMemoryEntries-1].Content)
}
