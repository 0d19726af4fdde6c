package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func (s queries) RuntimeMemberUpsert(ctx context.Context, m db.RuntimeMember) error {
	return interpretError(s.q.RuntimeMemberUpsert(ctx, postgresgen.RuntimeMemberUpsertParams{
		MemberID:         m.MemberID,
		Role:             m.Role,
		BuildVersion:     m.BuildVersion,
		SchemaMin:        m.SchemaMin,
		SchemaMax:        m.SchemaMax,
		PayloadMin:       m.PayloadMin,
		PayloadMax:       m.PayloadMax,
		BehaviorRevision: m.BehaviorRevision,
		StartedAt:        toTime(m.StartedAt),
		HeartbeatAt:      toTime(m.HeartbeatAt),
		ExpiresAt:        toTime(m.ExpiresAt),
	}))
}

func (s queries) RuntimeMemberListLive(ctx context.Context, now time.Time) ([]db.RuntimeMember, error) {
	rs, err := s.q.RuntimeMemberListLive(ctx, toTime(now))
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.RuntimeMember, 0, len(rs))
	for _, r := range rs {
		out = append(out, db.RuntimeMember{
			MemberID:         r.MemberID,
			Role:             r.Role,
			BuildVersion:     r.BuildVersion,
			SchemaMin:        r.SchemaMin,
			SchemaMax:        r.SchemaMax,
			PayloadMin:       r.PayloadMin,
			PayloadMax:       r.PayloadMax,
			BehaviorRevision: r.BehaviorRevision,
			StartedAt:        fromTime(r.StartedAt),
			HeartbeatAt:      fromTime(r.HeartbeatAt),
			ExpiresAt:        fromTime(r.ExpiresAt),
		})
	}
	return out, nil
}

func (s queries) RuntimeMemberDelete(ctx context.Context, memberID string) (int64, error) {
	rows, err := s.q.RuntimeMemberDelete(ctx, memberID)
	return rows, interpretError(err)
}

func (s queries) RuntimeMemberPurgeExpired(ctx context.Context, before time.Time) (int64, error) {
	rows, err := s.q.RuntimeMemberPurgeExpired(ctx, toTime(before))
	return rows, interpretError(err)
}
