package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func experienceCandidateFromRow(r postgresgen.PcExperienceCandidate) db.ExperienceCandidate {
	return db.ExperienceCandidate{
		CandidateID:    r.CandidateID,
		ScopeID:        r.ScopeID,
		WorkID:         r.WorkID,
		Title:          r.Title,
		Lesson:         r.Lesson,
		CitedPositions: r.CitedPositions,
		Status:         r.Status,
		StateVersion:   r.StateVersion,
		CreatedAt:      fromTime(r.CreatedAt),
		UpdatedAt:      fromTime(r.UpdatedAt),
	}
}

func (s queries) ExperienceCandidateInsert(ctx context.Context, c db.ExperienceCandidate) error {
	return interpretError(s.q.ExperienceCandidateInsert(ctx, postgresgen.ExperienceCandidateInsertParams{
		CandidateID:    c.CandidateID,
		ScopeID:        c.ScopeID,
		WorkID:         c.WorkID,
		Title:          c.Title,
		Lesson:         c.Lesson,
		CitedPositions: c.CitedPositions,
		Status:         c.Status,
		StateVersion:   c.StateVersion,
		CreatedAt:      toTime(c.CreatedAt),
		UpdatedAt:      toTime(c.UpdatedAt),
	}))
}

func (s queries) ExperienceCandidateGet(ctx context.Context, candidateID string) (db.ExperienceCandidate, error) {
	r, err := s.q.ExperienceCandidateGet(ctx, candidateID)
	if err != nil {
		return db.ExperienceCandidate{}, interpretError(err)
	}
	return experienceCandidateFromRow(r), nil
}

// ExperienceCandidateList lists newest first; status "" means any.
func (s queries) ExperienceCandidateList(ctx context.Context, scopeID, status string, limit int32) ([]db.ExperienceCandidate, error) {
	rs, err := s.q.ExperienceCandidateList(ctx, postgresgen.ExperienceCandidateListParams{
		ScopeID: scopeID,
		Status:  toTextPtr(status),
		MaxRows: limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.ExperienceCandidate, 0, len(rs))
	for _, r := range rs {
		out = append(out, experienceCandidateFromRow(r))
	}
	return out, nil
}

func (s queries) ExperienceCandidateUpdateStatus(ctx context.Context, candidateID string, expectedVersion int64, status string, at time.Time) (int64, error) {
	rows, err := s.q.ExperienceCandidateUpdateStatus(ctx, postgresgen.ExperienceCandidateUpdateStatusParams{
		Status:          status,
		ExpectedVersion: expectedVersion,
		UpdatedAt:       toTime(at),
		CandidateID:     candidateID,
	})
	return rows, interpretError(err)
}
