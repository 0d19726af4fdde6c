package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func (q *queries) RuntimeMemberUpsert(ctx context.Context, m db.RuntimeMember) error {
	return interpretError(q.w.RuntimeMemberUpsert(ctx, sqlitegen.RuntimeMemberUpsertParams{
		MemberID:         m.MemberID,
		Role:             m.Role,
		BuildVersion:     m.BuildVersion,
		SchemaMin:        m.SchemaMin,
		SchemaMax:        m.SchemaMax,
		PayloadMin:       int64(m.PayloadMin),
		PayloadMax:       int64(m.PayloadMax),
		BehaviorRevision: m.BehaviorRevision,
		StartedAt:        toMicros(m.StartedAt),
		HeartbeatAt:      toMicros(m.HeartbeatAt),
		ExpiresAt:        toMicros(m.ExpiresAt),
	}))
}

func (q *queries) RuntimeMemberListLive(ctx context.Context, now time.Time) ([]db.RuntimeMember, error) {
	rows, err := q.r.RuntimeMemberListLive(ctx, toMicros(now))
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.RuntimeMember, 0, len(rows))
	for _, r := range rows {
		out = append(out, db.RuntimeMember{
			MemberID:         r.MemberID,
			Role:             r.Role,
			BuildVersion:     r.BuildVersion,
			SchemaMin:        r.SchemaMin,
			SchemaMax:        r.SchemaMax,
			PayloadMin:       int32(r.PayloadMin),
			PayloadMax:       int32(r.PayloadMax),
			BehaviorRevision: r.BehaviorRevision,
			StartedAt:        fromMicros(r.StartedAt),
			HeartbeatAt:      fromMicros(r.HeartbeatAt),
			ExpiresAt:        fromMicros(r.ExpiresAt),
		})
	}
	return out, nil
}

func (q *queries) RuntimeMemberDelete(ctx context.Context, memberID string) (int64, error) {
	return affected(q.w.RuntimeMemberDelete(ctx, memberID))
}

func (q *queries) RuntimeMemberPurgeExpired(ctx context.Context, before time.Time) (int64, error) {
	return affected(q.w.RuntimeMemberPurgeExpired(ctx, toMicros(before)))
}
