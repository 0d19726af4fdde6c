package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) UISessionInsert(ctx context.Context, s db.UISession) error {
	return errs.Err(q.q.UISessionInsert(ctx, conv.UISessionToGen[postgresgen.UISessionInsertParams](s)))
}

func (q queries) UISessionGetUnexpired(ctx context.Context, sessionDigest string) (db.UISession, error) {
	r, err := q.q.UISessionGetUnexpired(ctx, sessionDigest)
	return conv.One(errs, r, err, conv.UISessionFromGen)
}

func (q queries) UISessionDelete(ctx context.Context, sessionDigest string) (int64, error) {
	return errs.Rows(q.q.UISessionDelete(ctx, sessionDigest))
}

func (q queries) UISessionPurgeExpired(ctx context.Context, p db.UISessionPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.q.UISessionPurgeExpired(ctx, conv.PurgeExpiredToGen[postgresgen.UISessionPurgeExpiredParams](p)))
}
