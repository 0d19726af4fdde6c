package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func (q *queries) RuntimeMemberUpsert(ctx context.Context, m db.RuntimeMember) error {
	return interpretError(q.q.RuntimeMemberUpsert(ctx, mysqlgen.RuntimeMemberUpsertParams{
		MemberID:         m.MemberID,
		Role:             m.Role,
		BuildVersion:     m.BuildVersion,
		SchemaMin:        m.SchemaMin,
		SchemaMax:        m.SchemaMax,
		PayloadMin:       m.PayloadMin,
		PayloadMax:       m.PayloadMax,
		BehaviorRevision: m.BehaviorRevision,
		StartedAt:        ts(m.StartedAt),
		HeartbeatAt:      ts(m.HeartbeatAt),
		ExpiresAt:        ts(m.ExpiresAt),
	}))
}

func (q *queries) RuntimeMemberListLive(ctx context.Context, now time.Time) ([]db.RuntimeMember, error) {
	rows, err := q.q.RuntimeMemberListLive(ctx, ts(now))
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.RuntimeMember, len(rows))
	for i, r := range rows {
		out[i] = db.RuntimeMember{
			MemberID:         r.MemberID,
			Role:             r.Role,
			BuildVersion:     r.BuildVersion,
			SchemaMin:        r.SchemaMin,
			SchemaMax:        r.SchemaMax,
			PayloadMin:       r.PayloadMin,
			PayloadMax:       r.PayloadMax,
			BehaviorRevision: r.BehaviorRevision,
			StartedAt:        r.StartedAt.UTC(),
			HeartbeatAt:      r.HeartbeatAt.UTC(),
			ExpiresAt:        r.ExpiresAt.UTC(),
		}
	}
	return out, nil
}

func (q *queries) RuntimeMemberDelete(ctx context.Context, memberID string) (int64, error) {
	n, err := q.q.RuntimeMemberDelete(ctx, memberID)
	return n, interpretError(err)
}

func (q *queries) RuntimeMemberPurgeExpired(ctx context.Context, before time.Time) (int64, error) {
	n, err := q.q.RuntimeMemberPurgeExpired(ctx, ts(before))
	return n, interpretError(err)
}
