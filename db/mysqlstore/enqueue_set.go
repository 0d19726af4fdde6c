package mysqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The set-based enqueue of a batch on MariaDB and MySQL 8 (docs/protocol.md#enqueue-many): the lanes locked in one
// statement, the keys inserted in one (plus one read of which were new), the lanes' allocators written in one and
// the items inserted in one, each per 1,000 rows (setRows: the statements number their rows from a 10 × 10 × 10
// derived table, since sqlc's MySQL parser has no JSON_TABLE). OceanBase keeps the per-row chains.

// setRows is the most rows one set statement writes. Its row-number table holds 1,000, but MariaDB's JSON functions
// parse their document from the start on every call, so taking row k out of the array costs a pass over the rows
// before it: a statement's cost grows with the square of its rows. Measured for 1,000 items on existing lanes
// (docs/protocol.md#set-based-steps-in-mysql-mode): 12–16 s in statements of 1,000 rows, about 0.6 s of 100,
// 0.35–0.45 s of 32.
const setRows = 32

// setBytes bounds the JSON one statement carries, well under max_allowed_packet's default (16 MiB on MariaDB, 64 MiB
// on MySQL 8): items carry payloads of up to 16 KiB, base64-encoded. A statement names its JSON argument once per
// column it extracts, and the driver interpolates every copy into the statement's text, so the bound is on the
// argument times its copies (chunks' copies).
const setBytes = 4 << 20

// The copies of the JSON argument in each set statement's text (sqlc.arg('…') per use in sql/queries/mysql).
const (
	keyCopies     = 1 // WorkKeyInsertMany: keys
	laneCopies    = 3 // WorkLaneUpdateMany: lanes twice, and the same keys in its IN list
	itemCopies    = 1 // WorkItemInsertMany: items
	succeedCopies = 3 // WorkItemAttemptSucceedMany: results
)

// WorkLaneLockMany locks the lanes in one statement (ascending lane_key) and reads the clock in it.
func (q queries) WorkLaneLockMany(ctx context.Context, laneKeys []string) ([]db.WorkLane, time.Time, error) {
	if q.flavor.chains() || q.tx == nil {
		return db.ChainWorkLaneLockMany(ctx, q, laneKeys)
	}
	rows, err := q.q.WorkLaneLockMany(ctx, db.SortedSet(laneKeys))
	if err != nil {
		return nil, time.Time{}, errs(err)
	}
	lanes := make([]db.WorkLane, len(rows))
	for i, r := range rows {
		lanes[i] = conv.WorkLaneLockFromGen(r)
	}
	if len(rows) > 0 {
		return lanes, conv.TimeFromGen(rows[0].DbNow), nil
	}
	now, err := q.DBNow(ctx)
	return lanes, now, err
}

// WorkKeyInsertMany inserts the keys that do not exist (the first of two with one logical key, as the chain) and
// returns the work ids of those it inserted: one INSERT … SELECT … WHERE NOT EXISTS per 1,000 keys (an existing key
// takes no lock), then one read of the new owners.
func (q queries) WorkKeyInsertMany(ctx context.Context, keys []db.WorkKey) ([]string, error) {
	if q.flavor.chains() || q.tx == nil {
		return db.ChainWorkKeyInsertMany(ctx, q, keys)
	}
	if len(keys) == 0 {
		return []string{}, nil
	}
	seen := make(map[string]bool, len(keys))
	rows := make([][3]string, 0, len(keys))
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		if !k.CreatedAt.Equal(keys[0].CreatedAt) {
			return nil, fmt.Errorf("mysqlstore: WorkKeyInsertMany: the keys of one batch share one creation time")
		}
		if seen[k.LogicalKey] {
			continue
		}
		seen[k.LogicalKey] = true
		rows = append(rows, [3]string{k.LogicalKey, k.WorkID, k.LaneKey})
		ids = append(ids, k.WorkID)
	}
	created := conv.TimeToGen[time.Time](keys[0].CreatedAt)
	for _, chunk := range chunks(rows, keyCopies, func(r [3]string) int { return len(r[0]) + len(r[1]) + len(r[2]) + 12 }) {
		b, err := json.Marshal(chunk)
		if err != nil {
			return nil, err
		}
		_, err = q.q.WorkKeyInsertMany(ctx, mysqlgen.WorkKeyInsertManyParams{Keys: string(b), CreatedAt: created, Count: int64(len(chunk))})
		switch err = errs(err); {
		case errors.Is(err, db.ErrConflict):
			// A key of the chunk was inserted by another transaction since the statement's read (the statement
			// rolled back alone): key by key, each duplicate one not inserted, as the single enqueue does.
			for _, r := range chunk {
				_, err := q.q.WorkKeyInsertIfAbsentUnlocked(ctx, mysqlgen.WorkKeyInsertIfAbsentUnlockedParams{
					LogicalKey: r[0], WorkID: r[1], LaneKey: r[2], CreatedAt: created})
				if err = errs(err); err != nil && !errors.Is(err, db.ErrConflict) {
					return nil, err
				}
			}
		case err != nil:
			return nil, err
		}
	}
	owners, err := q.q.WorkKeyListOwnersMany(ctx, ids)
	if err != nil {
		return nil, errs(err)
	}
	mine := make(map[string]bool, len(owners))
	for _, id := range owners {
		mine[id] = true
	}
	out := []string{}
	for _, id := range ids { // in the order of keys
		if mine[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// itemJSON is one row of WorkItemInsertMany's JSON array.
type itemJSON struct {
	W string `json:"w"`
	L string `json:"l"`
	N string `json:"n"`
	S int64  `json:"s"`
	K string `json:"k"`
	V int32  `json:"v"`
	C []byte `json:"c"` // scope_id (VARBINARY), base64
	P []byte `json:"p"` // payload, base64
	M int32  `json:"m"`
}

// WorkItemEnqueueMany writes the lanes in one statement and inserts the items in one per 1,000, refusing an item
// not as an enqueue creates it before it writes anything (as the chain).
func (q queries) WorkItemEnqueueMany(ctx context.Context, now time.Time, lanes []db.WorkLane, items []db.WorkItem) (int64, int64, error) {
	if q.flavor.chains() || q.tx == nil || !hexKeys(lanes) {
		return db.ChainWorkItemEnqueueMany(ctx, q, now, lanes, items)
	}
	laneVals := make(map[string][2]int64, len(lanes))
	laneKeys := make([]string, 0, len(lanes))
	for _, l := range lanes {
		if l.HeadSequence == 0 {
			return 0, 0, fmt.Errorf("mysqlstore: WorkItemEnqueueMany: lane %s without a head", l.LaneKey)
		}
		laneVals[l.LaneKey] = [2]int64{l.NextSequence, l.HeadSequence}
		laneKeys = append(laneKeys, l.LaneKey)
	}
	rows := make([]itemJSON, len(items))
	for i, it := range items {
		if !db.IsEnqueued(it, now) {
			return 0, 0, fmt.Errorf("mysqlstore: WorkItemEnqueueMany: item %s is not as an enqueue creates it", it.WorkID)
		}
		rows[i] = itemJSON{W: it.WorkID, L: it.LogicalKey, N: it.LaneKey, S: it.LaneSequence, K: it.Kind,
			V: it.PayloadVersion, C: []byte(it.ScopeID), P: it.Payload, M: it.MaxAttempts}
	}
	var nl, ni int64
	for _, chunk := range chunks(laneKeys, laneCopies, func(string) int { return 2*64 + 2*20 + 8 }) {
		vals := make(map[string][2]int64, len(chunk))
		for _, k := range chunk {
			vals[k] = laneVals[k]
		}
		b, err := json.Marshal(vals)
		if err != nil {
			return 0, 0, err
		}
		n, err := q.q.WorkLaneUpdateMany(ctx, mysqlgen.WorkLaneUpdateManyParams{Lanes: string(b), LaneKeys: chunk})
		if err != nil {
			return 0, 0, errs(err)
		}
		nl += n
	}
	at := conv.TimeToGen[time.Time](now)
	for _, chunk := range chunks(rows, itemCopies, func(r itemJSON) int { return 4*(len(r.C)+len(r.P))/3 + len(r.K) + 260 }) {
		b, err := json.Marshal(chunk)
		if err != nil {
			return nl, ni, err
		}
		n, err := q.q.WorkItemInsertMany(ctx, mysqlgen.WorkItemInsertManyParams{Items: string(b), Now: at, Count: int64(len(chunk))})
		if err != nil {
			return nl, ni, errs(err)
		}
		ni += n
	}
	return nl, ni, nil
}

// hexKeys reports whether every lane key is lowercase hex (what the ledger writes), so that it is a safe JSON path
// member in WorkLaneUpdateMany; anything else takes the chain.
func hexKeys(lanes []db.WorkLane) bool {
	for _, l := range lanes {
		for _, c := range l.LaneKey {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// chunks splits rows into runs of at most setRows rows whose statement text carries about setBytes of JSON: size
// estimates a row's JSON, which the statement holds copies times.
func chunks[T any](rows []T, copies int, size func(T) int) [][]T {
	var out [][]T
	start, bytes := 0, 0
	for i, r := range rows {
		n := copies * size(r)
		if i > start && (i-start == setRows || bytes+n > setBytes) {
			out = append(out, rows[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(rows) {
		out = append(out, rows[start:])
	}
	return out
}
