package postgresstore

import (
	"context"
)

func (q queries) WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	return errs.Rows(q.q.WorkAttemptDeleteByWorkIDs(ctx, workIDs))
}
