package postgresstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The set-based enqueue of a batch (docs/protocol.md#enqueue-many): the lanes locked in one statement, the keys
// inserted in one, and the lanes' allocators and the items written in one.

// WorkLaneLockMany locks the lanes in one statement (ascending lane_key: the ORDER BY sits under the row locks, so
// they are taken in that order) pipelined with the clock read that follows the locks.
func (q queries) WorkLaneLockMany(ctx context.Context, laneKeys []string) ([]db.WorkLane, time.Time, error) {
	if q.tx == nil {
		return nil, time.Time{}, db.ErrNoTransaction
	}
	var (
		rows []postgresgen.PcWorkLane
		now  time.Time
	)
	res := q.tx.pipeline(ctx,
		func(g *postgresgen.Queries) (err error) { rows, err = g.WorkLaneLockMany(ctx, laneKeys); return err },
		func(g *postgresgen.Queries) (err error) { now, err = g.DBNow(ctx); return err },
	)
	if err := errors.Join(res...); err != nil {
		return nil, time.Time{}, interpretError(err)
	}
	lanes := make([]db.WorkLane, len(rows))
	for i, r := range rows {
		lanes[i] = conv.WorkLaneFromGen(r)
	}
	return lanes, conv.TimeFromGen(now), nil
}

// WorkKeyInsertMany inserts the keys that do not exist in one statement.
func (q queries) WorkKeyInsertMany(ctx context.Context, keys []db.WorkKey) ([]string, error) {
	if q.tx == nil {
		return nil, db.ErrNoTransaction
	}
	if len(keys) == 0 {
		return []string{}, nil
	}
	arg := postgresgen.WorkKeyInsertManyParams{
		LogicalKeys: make([]string, len(keys)), WorkIds: make([]string, len(keys)), LaneKeys: make([]string, len(keys)),
		CreatedAt: keys[0].CreatedAt,
	}
	for i, k := range keys {
		if !k.CreatedAt.Equal(arg.CreatedAt) {
			return nil, errors.New("postgresstore: WorkKeyInsertMany: the keys of one batch share one creation time")
		}
		arg.LogicalKeys[i], arg.WorkIds[i], arg.LaneKeys[i] = k.LogicalKey, k.WorkID, k.LaneKey
	}
	ids, err := q.q.WorkKeyInsertMany(ctx, arg)
	return errs.Strings(ids, err)
}

// WorkItemEnqueueMany writes the lanes and inserts the items in one statement.
func (q queries) WorkItemEnqueueMany(ctx context.Context, now time.Time, lanes []db.WorkLane, items []db.WorkItem) (int64, int64, error) {
	if q.tx == nil {
		return 0, 0, db.ErrNoTransaction
	}
	if len(items) == 0 && len(lanes) == 0 {
		return 0, 0, nil
	}
	arg := postgresgen.WorkItemEnqueueManyParams{Now: now}
	for _, l := range lanes {
		if l.HeadSequence == 0 {
			return 0, 0, fmt.Errorf("postgresstore: WorkItemEnqueueMany: lane %s without a head", l.LaneKey)
		}
		arg.LaneKeys = append(arg.LaneKeys, l.LaneKey)
		arg.NextSequences = append(arg.NextSequences, l.NextSequence)
		arg.HeadSequences = append(arg.HeadSequences, l.HeadSequence)
	}
	for _, it := range items {
		if !db.IsEnqueued(it, now) {
			return 0, 0, fmt.Errorf("postgresstore: WorkItemEnqueueMany: item %s is not as an enqueue creates it", it.WorkID)
		}
		arg.WorkIds = append(arg.WorkIds, it.WorkID)
		arg.LogicalKeys = append(arg.LogicalKeys, it.LogicalKey)
		arg.ItemLaneKeys = append(arg.ItemLaneKeys, it.LaneKey)
		arg.LaneSequences = append(arg.LaneSequences, it.LaneSequence)
		arg.Kinds = append(arg.Kinds, it.Kind)
		arg.PayloadVersions = append(arg.PayloadVersions, it.PayloadVersion)
		arg.ScopeIds = append(arg.ScopeIds, it.ScopeID)
		arg.Payloads = append(arg.Payloads, it.Payload)
		arg.MaxAttempts = append(arg.MaxAttempts, it.MaxAttempts)
	}
	r, err := q.q.WorkItemEnqueueMany(ctx, arg)
	if err != nil {
		return 0, 0, interpretError(err)
	}
	return r.LanesUpdated, r.ItemsInserted, nil
}
