package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) UISessionInsert(ctx context.Context, s db.UISession) error {
	return errs.Err(q.w.UISessionInsert(ctx, conv.UISessionToGen[sqlitegen.UISessionInsertParams](s)))
}

func (q *queries) UISessionGetUnexpired(ctx context.Context, sessionDigest string) (db.UISession, error) {
	r, err := q.r.UISessionGetUnexpired(ctx, sessionDigest)
	return conv.One(errs, r, err, conv.UISessionFromGen)
}

func (q *queries) UISessionDelete(ctx context.Context, sessionDigest string) (int64, error) {
	return errs.Rows(q.w.UISessionDelete(ctx, sessionDigest))
}

func (q *queries) UISessionPurgeExpired(ctx context.Context, p db.UISessionPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.w.UISessionPurgeExpired(ctx, conv.PurgeExpiredToGen[sqlitegen.UISessionPurgeExpiredParams](p)))
}
