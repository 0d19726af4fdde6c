package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) ExperienceCandidateInsert(ctx context.Context, c db.ExperienceCandidate) error {
	return errs.Err(q.q.ExperienceCandidateInsert(ctx, conv.ExperienceCandidateToGen[postgresgen.ExperienceCandidateInsertParams](c)))
}

func (q queries) ExperienceCandidateGet(ctx context.Context, candidateID string) (db.ExperienceCandidate, error) {
	r, err := q.q.ExperienceCandidateGet(ctx, candidateID)
	return conv.One(errs, r, err, conv.ExperienceCandidateFromGen)
}

func (q queries) ExperienceCandidateList(ctx context.Context, p db.ExperienceCandidateListParams) ([]db.ExperienceCandidate, error) {
	rs, err := q.q.ExperienceCandidateList(ctx, conv.ExperienceCandidateListToGen[postgresgen.ExperienceCandidateListParams](p))
	return conv.Many(errs, rs, err, conv.ExperienceCandidateFromGen)
}

func (q queries) ExperienceCandidateUpdateStatus(ctx context.Context, p db.ExperienceCandidateUpdateStatusParams) (int64, error) {
	return errs.Rows(q.q.ExperienceCandidateUpdateStatus(ctx, conv.ExperienceCandidateUpdateStatusToGen[postgresgen.ExperienceCandidateUpdateStatusParams](p)))
}
