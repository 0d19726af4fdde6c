package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

func TestEstimateTokens(t *testing.T) {
	require.Equal(t, 0, memory.EstimateTokens(""))
	require.Equal(t, 1, memory.EstimateTokens("abc"))
	require.Equal(t, 2, memory.EstimateTokens("abcde"))
	require.Equal(t, 3, memory.EstimateTokens("数据库"))
	require.Equal(t, 1+3+1, memory.EstimateTokens("Use 数据库 ok"), "'Use ' 1, three CJK characters, ' ok' 1 (rounded up per run)")
}

// TestContextStaysWithinBudgetWithApprovedLessonsOnly assembles contexts on every engine: relevant entries first,
// approved lessons only, never over the budget.
func TestContextStaysWithinBudgetWithApprovedLessonsOnly(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		for _, c := range []string{
			"Staging uses PostgreSQL 17 on staging-db-1.",
			"The deploy window is Friday at noon.",
			"Alice owns the billing service.",
			"部署前需要运行数据库迁移脚本。",
			"Filler" + strings.Repeat(" words without an end", 30),
		} {
			_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "ctx", Content: c})
			require.NoError(t, err)
		}
		_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("ctx"))
		require.NoError(t, err)
		require.Equal(t, "processed", e.runOne(t, e.handler).ResultCode)

		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		lesson := func(status, title, body string) string {
			id := uuid.NewString()
			require.NoError(t, s.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: id, ScopeID: "ctx",
				WorkID: uuid.NewString(), Title: title, Lesson: body, CitedPositions: []byte(`[2]`), Status: status,
				StateVersion: 1, CreatedAt: now, UpdatedAt: now}))
			return id
		}
		approved := lesson(experience.StatusApproved, "Deploy on Friday", "Check the staging database before the Friday deploy.")
		lesson(experience.StatusPending, "Pending staging lesson", "Staging staging staging.")
		lesson(experience.StatusRejected, "Rejected staging lesson", "Staging is never down.")
		other := lesson(experience.StatusApproved, "Lunch", "Order lunch early.")

		a := memory.Assembler{Memory: memory.Reader{Store: s}, Lessons: experience.Reviews{Store: s}}
		got, err := a.Assemble(ctx, "ctx", "staging database", 10000)
		require.NoError(t, err)
		require.Equal(t, int64(1), got.Revision)
		require.Equal(t, memory.ItemMemory, got.Items[0].Kind)
		require.Contains(t, got.Items[0].Content, "staging-db-1")
		var lessons []string
		used := 0
		for _, it := range got.Items {
			used += it.Tokens
			if it.Kind == memory.ItemLesson {
				lessons = append(lessons, it.CandidateID)
			}
		}
		require.Equal(t, []string{approved, other}, lessons, "approved only, the matching one first")
		require.Equal(t, used, got.UsedTokens)
		require.Zero(t, got.Omitted)

		// The CJK query finds its entry first.
		got, err = a.Assemble(ctx, "ctx", "迁移", 10000)
		require.NoError(t, err)
		require.Contains(t, got.Items[0].Content, "数据库迁移")
		require.JSONEq(t, `[4]`, string(got.Items[0].SourcePositions))

		// A small budget: never exceeded, the best item kept, the long filler left out.
		for _, budget := range []int{1, 12, 25, 60} {
			got, err = a.Assemble(ctx, "ctx", "staging database", budget)
			require.NoError(t, err)
			require.LessOrEqual(t, got.UsedTokens, budget)
			sum := 0
			for _, it := range got.Items {
				sum += it.Tokens
				require.NotContains(t, it.Content, "Filler")
			}
			require.Equal(t, sum, got.UsedTokens)
			require.Positive(t, got.Omitted)
			if budget >= 12 {
				require.Contains(t, got.Items[0].Content, "staging-db-1")
			}
		}
		_, err = a.Assemble(ctx, "ctx", "", 0)
		require.Error(t, err)
	})
}
