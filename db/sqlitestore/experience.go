package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func experienceCandidateFromGen(r sqlitegen.PcExperienceCandidate) db.ExperienceCandidate {
	return db.ExperienceCandidate{
		CandidateID:    r.CandidateID,
		ScopeID:        r.ScopeID,
		WorkID:         r.WorkID,
		Title:          r.Title,
		Lesson:         r.Lesson,
		CitedPositions: r.CitedPositions,
		Status:         r.Status,
		StateVersion:   r.StateVersion,
		CreatedAt:      fromMicros(r.CreatedAt),
		UpdatedAt:      fromMicros(r.UpdatedAt),
	}
}

func (q *queries) ExperienceCandidateInsert(ctx context.Context, c db.ExperienceCandidate) error {
	return interpretError(q.w.ExperienceCandidateInsert(ctx, sqlitegen.ExperienceCandidateInsertParams{
		CandidateID:    c.CandidateID,
		ScopeID:        c.ScopeID,
		WorkID:         c.WorkID,
		Title:          c.Title,
		Lesson:         c.Lesson,
		CitedPositions: c.CitedPositions,
		Status:         c.Status,
		StateVersion:   c.StateVersion,
		CreatedAt:      toMicros(c.CreatedAt),
		UpdatedAt:      toMicros(c.UpdatedAt),
	}))
}

func (q *queries) ExperienceCandidateGet(ctx context.Context, candidateID string) (db.ExperienceCandidate, error) {
	r, err := q.r.ExperienceCandidateGet(ctx, candidateID)
	if err != nil {
		return db.ExperienceCandidate{}, interpretError(err)
	}
	return experienceCandidateFromGen(r), nil
}

// ExperienceCandidateList lists newest first; status "" means any.
func (q *queries) ExperienceCandidateList(ctx context.Context, scopeID, status string, limit int32) ([]db.ExperienceCandidate, error) {
	rows, err := q.r.ExperienceCandidateList(ctx, sqlitegen.ExperienceCandidateListParams{
		ScopeID: scopeID,
		Status:  toNullString(status),
		MaxRows: int64(limit),
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.ExperienceCandidate, 0, len(rows))
	for _, r := range rows {
		out = append(out, experienceCandidateFromGen(r))
	}
	return out, nil
}

func (q *queries) ExperienceCandidateUpdateStatus(ctx context.Context, candidateID string, expectedVersion int64, status string, at time.Time) (int64, error) {
	return affected(q.w.ExperienceCandidateUpdateStatus(ctx, sqlitegen.ExperienceCandidateUpdateStatusParams{
		Status:          status,
		ExpectedVersion: expectedVersion,
		UpdatedAt:       toMicros(at),
		CandidateID:     candidateID,
	}))
}
