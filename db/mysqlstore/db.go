package mysqlstore

import (
	"context"
	"time"
)

// DBNow returns the database clock (UTC).
func (q *queries) DBNow(ctx context.Context) (time.Time, error) {
	now, err := q.q.DBNow(ctx)
	if err != nil {
		return time.Time{}, interpretError(err)
	}
	return now.UTC(), nil
}
