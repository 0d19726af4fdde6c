package db

import (
	"context"
)

// ExperienceCandidateQueries are the statements of pc_experience_candidates (sql/queries/<engine>/experience.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type ExperienceCandidateQueries interface {
	// The erase's batches: each deletes at most p.Limit rows of p.ScopeID. Return rows deleted.
	ExperienceCandidateDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	ExperienceCandidateGet(ctx context.Context, candidateID string) (ExperienceCandidate, error)
	ExperienceCandidateInsert(ctx context.Context, c ExperienceCandidate) error

	// ExperienceCandidateList lists a scope's candidates, newest first; Status "" means any.
	ExperienceCandidateList(ctx context.Context, p ExperienceCandidateListParams) ([]ExperienceCandidate, error)

	// ExperienceCandidateListByScopeAfter pages a scope's candidates by candidate_id (> p.AfterCandidateID).
	ExperienceCandidateListByScopeAfter(ctx context.Context, p ExperienceCandidateListByScopeAfterParams) ([]ExperienceCandidate, error)

	// ExperienceCandidateListByStatusAfter pages a scope's candidates in one status, oldest first: up to p.Limit
	// after (p.AfterCreatedAt, p.AfterCandidateID) in (created_at, candidate_id) order.
	ExperienceCandidateListByStatusAfter(ctx context.Context, p ExperienceCandidateListByStatusAfterParams) ([]ExperienceCandidate, error)

	// ExperienceCandidateListUnpackaged is the skill packaging discoverer's keyset over scopes: up to p.Limit approved
	// candidates of the scopes after p.AfterScopeID, by (scope_id, candidate_id) in byte order, whose id is in no
	// current revision of their scope's skills (their packaging was never enqueued, or has not committed yet).
	ExperienceCandidateListUnpackaged(ctx context.Context, p ExperienceCandidateListUnpackagedParams) ([]ExperienceCandidate, error)

	// ExperienceCandidateUpdateStatus sets status, state_version = expected+1 and updated_at where the version
	// equals p.ExpectedVersion and the candidate is pending. Returns rows changed.
	ExperienceCandidateUpdateStatus(ctx context.Context, p ExperienceCandidateUpdateStatusParams) (int64, error)

	// ExperienceCandidateWithdraw sets a candidate withdrawn (state_version + 1) unless it already is. Returns rows
	// matched.
	ExperienceCandidateWithdraw(ctx context.Context, p ExperienceCandidateWithdrawParams) (int64, error)
}

// ExperienceCandidateListUnpackagedParams pages ExperienceCandidateListUnpackaged; start with AfterScopeID = "".
type ExperienceCandidateListUnpackagedParams struct {
	AfterScopeID string
	Limit        int32
}
