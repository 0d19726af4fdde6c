package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func experienceCandidateFromGen(r mysqlgen.PcExperienceCandidate) db.ExperienceCandidate {
	return db.ExperienceCandidate{
		CandidateID:    r.CandidateID,
		ScopeID:        r.ScopeID,
		WorkID:         r.WorkID,
		Title:          r.Title,
		Lesson:         r.Lesson,
		CitedPositions: r.CitedPositions,
		Status:         r.Status,
		StateVersion:   r.StateVersion,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
	}
}

func (q *queries) ExperienceCandidateInsert(ctx context.Context, c db.ExperienceCandidate) error {
	return interpretError(q.q.ExperienceCandidateInsert(ctx, mysqlgen.ExperienceCandidateInsertParams{
		CandidateID:    c.CandidateID,
		ScopeID:        c.ScopeID,
		WorkID:         c.WorkID,
		Title:          c.Title,
		Lesson:         c.Lesson,
		CitedPositions: c.CitedPositions,
		Status:         c.Status,
		StateVersion:   c.StateVersion,
		CreatedAt:      ts(c.CreatedAt),
		UpdatedAt:      ts(c.UpdatedAt),
	}))
}

func (q *queries) ExperienceCandidateGet(ctx context.Context, candidateID string) (db.ExperienceCandidate, error) {
	r, err := q.q.ExperienceCandidateGet(ctx, candidateID)
	if err != nil {
		return db.ExperienceCandidate{}, interpretError(err)
	}
	return experienceCandidateFromGen(r), nil
}

// ExperienceCandidateList lists newest first; status "" means any.
func (q *queries) ExperienceCandidateList(ctx context.Context, scopeID, status string, limit int32) ([]db.ExperienceCandidate, error) {
	rows, err := q.q.ExperienceCandidateList(ctx, mysqlgen.ExperienceCandidateListParams{
		ScopeID: scopeID,
		Status:  nullString(status),
		Limit:   limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.ExperienceCandidate, len(rows))
	for i, r := range rows {
		out[i] = experienceCandidateFromGen(r)
	}
	return out, nil
}

func (q *queries) ExperienceCandidateUpdateStatus(ctx context.Context, candidateID string, expectedVersion int64, status string, at time.Time) (int64, error) {
	n, err := q.q.ExperienceCandidateUpdateStatus(ctx, mysqlgen.ExperienceCandidateUpdateStatusParams{
		Status:          status,
		UpdatedAt:       ts(at),
		CandidateID:     candidateID,
		ExpectedVersion: expectedVersion,
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return n, nil
}
