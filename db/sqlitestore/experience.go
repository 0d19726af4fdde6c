package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) ExperienceCandidateInsert(ctx context.Context, c db.ExperienceCandidate) error {
	return errs.Err(q.w.ExperienceCandidateInsert(ctx, conv.ExperienceCandidateToGen[sqlitegen.ExperienceCandidateInsertParams](c)))
}

func (q *queries) ExperienceCandidateGet(ctx context.Context, candidateID string) (db.ExperienceCandidate, error) {
	r, err := q.r.ExperienceCandidateGet(ctx, candidateID)
	return conv.One(errs, r, err, conv.ExperienceCandidateFromGen)
}

func (q *queries) ExperienceCandidateList(ctx context.Context, p db.ExperienceCandidateListParams) ([]db.ExperienceCandidate, error) {
	rs, err := q.r.ExperienceCandidateList(ctx, conv.ExperienceCandidateListToGen[sqlitegen.ExperienceCandidateListParams](p))
	return conv.Many(errs, rs, err, conv.ExperienceCandidateFromGen)
}

func (q *queries) ExperienceCandidateUpdateStatus(ctx context.Context, p db.ExperienceCandidateUpdateStatusParams) (int64, error) {
	return errs.Rows(q.w.ExperienceCandidateUpdateStatus(ctx, conv.ExperienceCandidateUpdateStatusToGen[sqlitegen.ExperienceCandidateUpdateStatusParams](p)))
}
