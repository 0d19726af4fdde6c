package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) RuntimeMemberUpsert(ctx context.Context, m db.RuntimeMember) error {
	return errs.Err(q.q.RuntimeMemberUpsert(ctx, conv.RuntimeMemberToGen[postgresgen.RuntimeMemberUpsertParams](m)))
}

func (q queries) RuntimeMemberListLive(ctx context.Context, now time.Time) ([]db.RuntimeMember, error) {
	rs, err := q.q.RuntimeMemberListLive(ctx, conv.TimeToGen[time.Time](now))
	return conv.Many(errs, rs, err, conv.RuntimeMemberFromGen)
}

func (q queries) RuntimeMemberDelete(ctx context.Context, memberID string) (int64, error) {
	return errs.Rows(q.q.RuntimeMemberDelete(ctx, memberID))
}

func (q queries) RuntimeMemberPurgeExpired(ctx context.Context, p db.RuntimeMemberPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.q.RuntimeMemberPurgeExpired(ctx, conv.PurgeExpiredToGen[postgresgen.RuntimeMemberPurgeExpiredParams](p)))
}
