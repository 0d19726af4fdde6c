package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) RuntimeMemberUpsert(ctx context.Context, m db.RuntimeMember) error {
	return errs.Err(q.w.RuntimeMemberUpsert(ctx, conv.RuntimeMemberToGen[sqlitegen.RuntimeMemberUpsertParams](m)))
}

func (q *queries) RuntimeMemberListLive(ctx context.Context, now time.Time) ([]db.RuntimeMember, error) {
	rs, err := q.r.RuntimeMemberListLive(ctx, conv.TimeToGen[int64](now))
	return conv.Many(errs, rs, err, conv.RuntimeMemberFromGen)
}

func (q *queries) RuntimeMemberDelete(ctx context.Context, memberID string) (int64, error) {
	return errs.Rows(q.w.RuntimeMemberDelete(ctx, memberID))
}

func (q *queries) RuntimeMemberPurgeExpired(ctx context.Context, p db.RuntimeMemberPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.w.RuntimeMemberPurgeExpired(ctx, conv.PurgeExpiredToGen[sqlitegen.RuntimeMemberPurgeExpiredParams](p)))
}
