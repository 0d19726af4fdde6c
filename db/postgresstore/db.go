package postgresstore

import (
	"context"
	"time"
)

// DBNow returns clock_timestamp() in UTC.
func (s queries) DBNow(ctx context.Context) (time.Time, error) {
	now, err := s.q.DBNow(ctx)
	if err != nil {
		return time.Time{}, interpretError(err)
	}
	return fromTime(now), nil
}
