package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

func TestTokens(t *testing.T) {
	require.Equal(t, []string{"staging", "uses", "postgresql", "17"}, memory.Tokens("Staging uses PostgreSQL-17!", false))
	// A CJK run: bigrams, plus single characters in documents only.
	require.Equal(t, []string{"数据", "据库", "数", "据", "库"}, memory.Tokens("数据库", false))
	require.Equal(t, []string{"数据", "据库"}, memory.Tokens("数据库", true))
	require.Equal(t, []string{"库"}, memory.Tokens("库", true))
	// Mixed scripts split at the boundary; Japanese kana count as CJK.
	require.Equal(t, []string{"用", "go", "编写"}, memory.Tokens("用Go编写", true))
	require.Equal(t, []string{"テス", "スト"}, memory.Tokens("テスト", true))
	require.Empty(t, memory.Tokens(" ,.!? ", true))
}

func TestRankOrdersByRelevance(t *testing.T) {
	es := []db.MemoryEntry{
		{EntryNo: 1, Content: "The staging database is backed up nightly."},
		{EntryNo: 2, Content: "Staging uses PostgreSQL 17 and the staging cluster has three nodes."},
		{EntryNo: 3, Content: "Lunch is at noon."},
	}
	got := memory.Rank(es, "staging", true)
	require.Len(t, got, 2)
	require.Equal(t, int32(2), got[0].Entry.EntryNo, "two occurrences rank first")
	require.Greater(t, got[0].Score, got[1].Score)
	require.Empty(t, memory.Rank(es, "kubernetes", false))
	// all: every term must be present; any: one is enough.
	require.Len(t, memory.Rank(es, "staging nightly", true), 1)
	require.Len(t, memory.Rank(es, "staging nightly", false), 2)
	require.Len(t, memory.Rank(es, "lunch staging", false), 3)
	// Equal scores: the later (more recent) entry first.
	same := []db.MemoryEntry{{EntryNo: 1, Content: "alpha beta"}, {EntryNo: 2, Content: "alpha gamma"}}
	got = memory.Rank(same, "alpha", true)
	require.Equal(t, []int32{2, 1}, []int32{got[0].Entry.EntryNo, got[1].Entry.EntryNo})
}

// TestSearchRanksCJKAndEnglish commits a Memory revision through the flush handler on every engine and checks that
// a two-character Chinese query inside sentences without spaces, and an English query, each rank the right entry
// first.
func TestSearchRanksCJKAndEnglish(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		for _, c := range []string{
			"我们的测试环境使用数据库集群。",
			"部署流程每周五在预发布环境运行，数据库迁移需要审批。",
			"数据库备份每天凌晨执行，数据库快照保留七天。",
			"The deploy pipeline uses blue-green releases.",
			"Staging uses PostgreSQL 17; the staging database runs on staging-db-1.",
			"Production uses PostgreSQL 16.",
		} {
			_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "rank", Content: c})
			require.NoError(t, err)
		}
		_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("rank"))
		require.NoError(t, err)
		require.Equal(t, "processed", e.runOne(t, e.handler).ResultCode)

		r := memory.Reader{Store: s}
		m, err := r.Search(ctx, "rank", "快照", 10)
		require.NoError(t, err)
		require.Len(t, m.Entries, 1)
		require.Contains(t, m.Entries[0].Content, "数据库快照")

		// "数据库" is in three entries; the one saying it twice ranks first.
		m, err = r.Search(ctx, "rank", "数据库", 10)
		require.NoError(t, err)
		require.Len(t, m.Entries, 3)
		require.Contains(t, m.Entries[0].Content, "数据库备份")
		require.Greater(t, m.Scores[0], m.Scores[1])

		m, err = r.Search(ctx, "rank", "staging database", 10)
		require.NoError(t, err)
		require.NotEmpty(t, m.Entries)
		require.Contains(t, m.Entries[0].Content, "staging-db-1")
		require.Len(t, m.Scores, len(m.Entries))

		m, err = r.Search(ctx, "rank", "审批", 1)
		require.NoError(t, err)
		require.Len(t, m.Entries, 1)
		require.Contains(t, m.Entries[0].Content, "审批")

		// Every term must be present: "staging" alone is not enough.
		m, err = r.Search(ctx, "rank", "staging kubernetes", 10)
		require.NoError(t, err)
		require.Empty(t, m.Entries)

		m, err = r.Search(ctx, "rank", "kubernetes", 10)
		require.NoError(t, err)
		require.Empty(t, m.Entries)
		require.Equal(t, int64(1), m.Revision)
	})
}

// BenchmarkRank scores a full revision (provider.MaxMemoryEntries entries of provider.MaxEntryBytes).
func BenchmarkRank(b *testing.B) {
	es := make([]db.MemoryEntry, provider.MaxMemoryEntries)
	for i := range es {
		txt := fmt.Sprintf("Fact %d: 部署流程每周五在预发布环境运行 staging uses PostgreSQL %d. ", i, i%20)
		es[i] = db.MemoryEntry{EntryNo: int32(i + 1), Content: strings.Repeat(txt, provider.MaxEntryBytes/len(txt))}
	}
	b.ResetTimer()
	for range b.N {
		memory.Rank(es, "数据库 staging PostgreSQL", false)
	}
}
