package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"

	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) RuntimeMemberListLive(ctx context.Context, now time.Time) ([]db.RuntimeMember, error) {
	rs, err := q.q.RuntimeMemberListLive(ctx, conv.TimeToGen[time.Time](now))
	return conv.Many(errs, rs, err, conv.RuntimeMemberFromGen)
}
