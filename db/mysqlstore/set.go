package mysqlstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The set-based ledger steps on MariaDB and MySQL 8 (docs/protocol.md#set-based-claim, #set-based-completion): a
// constant number of statements for any number of items, where the per-row chains (db.Chain…) pay one or more
// statements per item. MySQL has no data-modifying CTEs and go-sql-driver no pipelining, so each step is a few
// statements: IN lists (sqlc.slice) name the rows, and per-item values travel as one JSON object keyed by work_id
// (a uuid, so it is a safe JSON path member). OceanBase, whose locking reads start with a touch and which the
// adapter does not let skip locked rows, keeps the chains.

// WorkItemClaimMany runs a claim pass in one transaction of its own (its locks last until its claims are written).
func (s *Store) WorkItemClaimMany(ctx context.Context, p db.WorkItemClaimManyParams) (db.WorkItemClaimManyResult, error) {
	return db.InTxWorkItemClaimMany(ctx, s.InTx, p)
}

// WorkItemClaimMany is the claim pass inside the caller's transaction with the semantics of
// db.ChainWorkItemClaimMany: the candidate query, then the due supported heads in the rounds db.Round takes (as many
// candidates as slots are left, the pass in ascending lane order), each round one statement that locks its lanes
// and their head items without waiting, then one UPDATE claiming every locked, re-checked head and one INSERT …
// SELECT writing their attempt rows, sent with the COMMIT (claimWrites). A pass that claims k items in one round
// costs 3 round trips with its COMMIT (4 when an item had an attempt before), where the chain costs 3 + 2k.
func (q queries) WorkItemClaimMany(ctx context.Context, p db.WorkItemClaimManyParams) (db.WorkItemClaimManyResult, error) {
	if q.flavor.chains() || q.tx == nil {
		return db.ChainWorkItemClaimMany(ctx, q, p)
	}
	cands, err := q.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: p.Kinds(), Limit: p.Candidates})
	if err != nil {
		return db.WorkItemClaimManyResult{}, err
	}
	var res db.WorkItemClaimManyResult
	var due []db.ClaimCandidate
	res.Expired, due = p.Due(cands)
	slots := int(p.Slots)
	for rest := due; len(res.Claimed) < slots; {
		var round []db.ClaimCandidate
		if round, rest = db.Round(rest, slots-len(res.Claimed)); len(round) == 0 {
			break
		}
		claimed, now, err := q.claimRound(ctx, p, round, int32(len(res.Claimed)))
		if err != nil {
			return db.WorkItemClaimManyResult{}, err
		}
		if res.Now.IsZero() {
			res.Now = now
		}
		res.Claimed = append(res.Claimed, claimed...)
	}
	if res.Now.IsZero() {
		if res.Now, err = q.DBNow(ctx); err != nil {
			return db.WorkItemClaimManyResult{}, err
		}
	}
	return res, nil
}

// claimRound locks the round's lanes and head items (SKIP LOCKED), re-checks each locked head against the clock of
// that statement and claims those still due. The first claimed item takes slot before+1.
func (q queries) claimRound(ctx context.Context, p db.WorkItemClaimManyParams, round []db.ClaimCandidate, before int32) ([]db.ClaimedItem, time.Time, error) {
	laneKeys, workIDs := make([]string, len(round)), make([]string, len(round))
	for i, c := range round {
		laneKeys[i], workIDs[i] = c.LaneKey, c.WorkID
	}
	rows, err := q.q.WorkLaneItemLockManySkipLocked(ctx, mysqlgen.WorkLaneItemLockManySkipLockedParams{LaneKeys: laneKeys, WorkIds: workIDs})
	if err != nil {
		return nil, time.Time{}, errs(err)
	}
	if len(rows) == 0 {
		return nil, time.Time{}, nil
	}
	now := conv.TimeFromGen(rows[0].DbNow)
	var items []db.WorkItem
	for _, r := range rows { // ascending lane_key, as locked
		item := conv.WorkItemFromGen(r.PcWorkItem)
		if r.HeadSequence == nil || *r.HeadSequence != item.LaneSequence ||
			(item.Status != db.StatusQueued && item.Status != db.StatusRetryWait) ||
			item.AvailableAt.After(now) || !p.Supports(item.Kind, item.PayloadVersion) {
			continue
		}
		items = append(items, item)
	}
	if len(items) == 0 {
		return nil, now, nil
	}
	ids := make([]string, len(items))
	hadAttempt := false
	for i, it := range items {
		ids[i] = it.WorkID
		hadAttempt = hadAttempt || it.AttemptCount > 0
	}
	previous := map[string]mysqlgen.WorkAttemptCurrentTracesRow{}
	if hadAttempt {
		prev, err := q.q.WorkAttemptCurrentTraces(ctx, ids)
		if err != nil {
			return nil, now, errs(err)
		}
		for _, r := range prev {
			previous[r.WorkID] = r
		}
	}
	owner, expires := p.Owner, now.Add(p.Lease) // as p.Claim writes them
	out := make([]db.ClaimedItem, len(items))
	traces := map[string][2]string{}
	for i, item := range items {
		out[i].Item = p.Claim(item, now)
		if prev, ok := previous[item.WorkID]; ok {
			out[i].PreviousTraceID, out[i].PreviousSpanID = conv.TextFromGen(prev.TraceID), conv.TextFromGen(prev.SpanID)
		}
		if slot := before + int32(i) + 1; int(slot) <= len(p.TraceIDs) {
			out[i].Slot = slot
			if t, s := p.TraceIDs[slot-1], p.SpanIDs[slot-1]; t != "" || s != "" {
				traces[item.WorkID] = [2]string{t, s}
			}
		}
	}
	tj, err := traceJSON(traces)
	if err != nil {
		return nil, now, err
	}
	claimed, attempts, err := q.claimWrites(ctx,
		mysqlgen.WorkItemClaimListedManyParams{Owner: &owner, LeaseExpiresAt: &expires, Now: now, WorkIds: ids},
		mysqlgen.WorkAttemptInsertClaimedParams{Traces: tj, WorkIds: ids})
	if err != nil {
		return nil, now, err
	}
	if claimed != int64(len(ids)) {
		return nil, now, fmt.Errorf("mysqlstore: claim set matched %d of %d items under held locks", claimed, len(ids))
	}
	if attempts != int64(len(ids)) {
		return nil, now, fmt.Errorf("mysqlstore: claim set inserted %d attempts for %d claims", attempts, len(ids))
	}
	return out, now, nil
}

// claimWrites claims the listed items and inserts their attempt rows, and reports the rows each statement matched.
// Inside InTx on a pool that sends multi-statements (MariaDB, MySQL 8) both wait for the COMMIT and go with it in one
// round trip (atcommit.go), each followed by DBAssertRowCount, so the multi-statement fails before its COMMIT unless
// the UPDATE matched every re-checked item and the INSERT wrote one attempt each: they are reported as matching all,
// and the transaction commits only if they did. A claim pass's writes touch only rows its rounds hold, and no later
// statement of the pass reads them, so running them at the COMMIT changes nothing else. Otherwise, and inside a
// savepoint, they run one after the other.
func (q queries) claimWrites(ctx context.Context, claim mysqlgen.WorkItemClaimListedManyParams,
	attempts mysqlgen.WorkAttemptInsertClaimedParams) (int64, int64, error) {
	if q.atCommit != nil && !q.flavor.chains() {
		want := int64(len(claim.WorkIds))
		g := mysqlgen.New(recorder{q.atCommit})
		if _, err := g.WorkItemClaimListedMany(ctx, claim); err != nil {
			return 0, 0, err
		}
		if err := g.DBAssertRowCount(ctx, want); err != nil {
			return 0, 0, err
		}
		if _, err := g.WorkAttemptInsertClaimed(ctx, attempts); err != nil {
			return 0, 0, err
		}
		if err := g.DBAssertRowCount(ctx, want); err != nil {
			return 0, 0, err
		}
		return want, want, nil
	}
	c, err := q.q.WorkItemClaimListedMany(ctx, claim)
	if err != nil {
		return 0, 0, errs(err)
	}
	a, err := q.q.WorkAttemptInsertClaimed(ctx, attempts)
	return c, a, errs(err)
}

// traceJSON encodes work_id → [trace_id, span_id]; an empty id becomes JSON null, which the INSERT stores as NULL.
func traceJSON(traces map[string][2]string) (string, error) {
	obj := make(map[string][2]*string, len(traces))
	for id, t := range traces {
		var pair [2]*string
		for i := range t {
			if t[i] != "" {
				pair[i] = &t[i]
			}
		}
		obj[id] = pair
	}
	b, err := json.Marshal(obj)
	return string(b), err
}

// WorkLaneKeyItemLockMany locks the batch's lanes (ascending), then its logical keys (ascending), then its items
// (ascending work_id) — the lock order across the whole batch, as db.ChainWorkLaneKeyItemLockMany — in three
// statements, the last of which reads the clock.
func (q queries) WorkLaneKeyItemLockMany(ctx context.Context, refs []db.WorkItemRef) ([]db.LockedItem, time.Time, error) {
	if q.flavor.chains() || q.tx == nil {
		return db.ChainWorkLaneKeyItemLockMany(ctx, q, refs)
	}
	laneKeys, logicalKeys, workIDs := db.RefKeys(refs)
	lanes, keys, items, err := q.lockMany(ctx, db.SortedSet(laneKeys), db.SortedSet(logicalKeys), db.SortedSet(workIDs))
	if err != nil {
		return nil, time.Time{}, errs(err)
	}
	var now time.Time
	if len(items) > 0 {
		now = conv.TimeFromGen(items[0].DbNow)
	} else if now, err = q.DBNow(ctx); err != nil {
		return nil, time.Time{}, err
	}
	laneOf := make(map[string]db.WorkLane, len(lanes))
	for _, l := range lanes {
		laneOf[l.LaneKey] = conv.WorkLaneLockFromGen(l)
	}
	hasKey := make(map[string]bool, len(keys))
	for _, k := range keys {
		hasKey[k.LogicalKey] = true
	}
	itemOf := make(map[string]db.WorkItem, len(items))
	for _, r := range items {
		it := conv.WorkItemFromGen(r.PcWorkItem)
		itemOf[it.WorkID] = it
		q.batch.remember(it)
	}
	return db.LockedItems(refs, laneOf, hasKey, itemOf), now, nil
}

// succeedJSON is one item's values in WorkItemAttemptSucceedMany's JSON object: expected version, result code and payload
// (base64; "" is an empty payload); an absent code or payload is stored as NULL.
type succeedJSON struct {
	V int64   `json:"v"`
	C *string `json:"c,omitempty"`
	P *string `json:"p,omitempty"`
}

// WorkItemSucceedMany finishes the batch as db.ChainWorkItemSucceedMany does (the caller holds the lane, key and
// item locks) in three statements: items and their attempts in one multi-table UPDATE, the keys of the items it
// finished deleted, the heads advanced. Like the PostgreSQL statement, it fails unless every item that matched
// finished its attempt. The key DELETE and the head advance decide by the items' new state (succeeded at the
// expected version + 1; a finished head), so they may name every item of the batch, and when the pool sends
// multi-statements the three go in one round trip. The keys and lanes are the ones the batch lock read
// (WorkLaneKeyItemLockMany), or are read first when the batch was locked otherwise.
func (q queries) WorkItemSucceedMany(ctx context.Context, p db.WorkItemSucceedManyParams) (int64, error) {
	if q.flavor.chains() || q.tx == nil {
		return db.ChainWorkItemSucceedMany(ctx, q, p)
	}
	if len(p.Items) == 0 {
		return 0, nil
	}
	succeed, versions, err := succeedArgs(p)
	if err != nil {
		return 0, err
	}
	if tooLargeToSucceedAtOnce(succeed) {
		return db.ChainWorkItemSucceedMany(ctx, q, p)
	}
	keys := q.batch.keysOf(succeed.WorkIds)
	if keys == nil {
		rows, err := q.q.WorkItemListKeysMany(ctx, succeed.WorkIds)
		if err != nil {
			return 0, errs(err)
		}
		if len(rows) == 0 {
			return 0, nil // no item of the batch exists: none can finish
		}
		keys = make(map[string][2]string, len(rows))
		for _, r := range rows {
			keys[r.WorkID] = [2]string{r.LaneKey, r.LogicalKey}
		}
	}
	if q.atCommit == nil { // no multi-statements: one statement at a time
		matched, err := succeedStatements(ctx, q.q, succeed, keys, versions, false)
		if err != nil {
			return 0, errs(err)
		}
		return succeededOf(matched)
	}
	d := &deferredWrites{}
	if _, err := succeedStatements(ctx, mysqlgen.New(recorder{d}), succeed, keys, versions, false); err != nil {
		return 0, err
	}
	counts, err := execMulti(ctx, q.tx, d)
	if err != nil {
		return 0, err
	}
	if len(counts) != 3 {
		return 0, fmt.Errorf("mysqlstore: succeed set reported %d results for 3 statements", len(counts))
	}
	return succeededOf(counts[0])
}

// WorkItemSucceedManyAtCommit queues WorkItemSucceedMany's three statements for the COMMIT's multi-statement
// (atcommit.go), the finishing UPDATE followed by DBAssertRowCount of two rows per item (the item and its attempt), so
// the COMMIT runs only if every item finished. The keys and heads decide by the items' new state, as in the multi-
// statement of WorkItemSucceedMany. Without the batch lock's keys (WorkLaneKeyItemLockMany), outside InTx, on
// OceanBase or without multi-statements it runs at once (db.ChainWorkItemSucceedManyAtCommit).
func (q queries) WorkItemSucceedManyAtCommit(ctx context.Context, p db.WorkItemSucceedManyParams) error {
	if q.atCommit == nil || q.flavor.chains() || len(p.Items) == 0 {
		return db.ChainWorkItemSucceedManyAtCommit(ctx, q, p)
	}
	succeed, versions, err := succeedArgs(p)
	if err != nil {
		return err
	}
	keys := q.batch.keysOf(succeed.WorkIds)
	if keys == nil || tooLargeToSucceedAtOnce(succeed) {
		return db.ChainWorkItemSucceedManyAtCommit(ctx, q, p)
	}
	_, err = succeedStatements(ctx, mysqlgen.New(recorder{q.atCommit}), succeed, keys, versions, true)
	return err
}

// tooLargeToSucceedAtOnce reports whether the finishing UPDATE's text would carry more than setBytes of results (a
// batch of large result payloads): such a batch finishes item by item (db.ChainWorkItemSucceedMany), each statement
// carrying one result, instead of failing as a whole on max_allowed_packet.
func tooLargeToSucceedAtOnce(succeed mysqlgen.WorkItemAttemptSucceedManyParams) bool {
	return succeedCopies*len(succeed.Results) > setBytes
}

// succeedArgs is the finishing UPDATE's arguments for p and the key DELETE's guard: the expected versions only, not
// the results again.
func succeedArgs(p db.WorkItemSucceedManyParams) (mysqlgen.WorkItemAttemptSucceedManyParams, string, error) {
	vals := make(map[string]succeedJSON, len(p.Items))
	ids := make([]string, 0, len(p.Items))
	expected := make(map[string]int64, len(p.Items))
	for _, it := range p.Items {
		v := succeedJSON{V: it.ExpectedVersion}
		if it.ResultCode != "" {
			v.C = &it.ResultCode
		}
		if it.ResultPayload != nil {
			p := base64.StdEncoding.EncodeToString(it.ResultPayload)
			v.P = &p
		}
		vals[it.WorkID], expected[it.WorkID] = v, v.V
		ids = append(ids, it.WorkID)
	}
	results, err := json.Marshal(vals)
	if err != nil {
		return mysqlgen.WorkItemAttemptSucceedManyParams{}, "", err
	}
	versions, err := json.Marshal(expected)
	if err != nil {
		return mysqlgen.WorkItemAttemptSucceedManyParams{}, "", err
	}
	now := conv.TimeToGen[time.Time](p.Now)
	return mysqlgen.WorkItemAttemptSucceedManyParams{Results: string(results), Now: now, FinishedAt: now, WorkIds: ids},
		string(versions), nil
}

// succeedStatements runs the batch finish on g, or queues it when g writes to a recorder: the finishing UPDATE (with
// guard, followed by DBAssertRowCount of two rows per item), the keys' DELETE and the heads' advance, named by keys
// (lane and logical key by work id, at least one; an item without one is not found and finishes nothing). It returns
// the UPDATE's rows matched (0 from a recorder).
func succeedStatements(ctx context.Context, g *mysqlgen.Queries, succeed mysqlgen.WorkItemAttemptSucceedManyParams,
	keys map[string][2]string, versions string, guard bool) (int64, error) {
	ids := succeed.WorkIds
	laneKeys, logicalKeys, found := make([]string, 0, len(ids)), make([]string, 0, len(ids)), make([]string, 0, len(ids))
	for _, id := range ids {
		if k, ok := keys[id]; ok {
			laneKeys, logicalKeys, found = append(laneKeys, k[0]), append(logicalKeys, k[1]), append(found, id)
		}
	}
	matched, err := g.WorkItemAttemptSucceedMany(ctx, succeed)
	if err != nil {
		return 0, err
	}
	if guard {
		if err := g.DBAssertRowCount(ctx, 2*int64(len(ids))); err != nil {
			return 0, err
		}
	}
	if _, err := g.WorkKeyDeleteMany(ctx, mysqlgen.WorkKeyDeleteManyParams{LogicalKeys: db.SortedSet(logicalKeys), WorkIds: found, Versions: versions}); err != nil {
		return 0, err
	}
	_, err = g.WorkLaneAdvanceHeadMany(ctx, db.SortedSet(laneKeys))
	return matched, err
}

// succeededOf is the number of items WorkItemAttemptSucceedMany finished, from its rows matched (the item and its
// attempt, two per item).
func succeededOf(matched int64) (int64, error) {
	if matched%2 != 0 {
		return 0, fmt.Errorf("mysqlstore: succeed set matched %d rows: an item without its attempt", matched)
	}
	return matched / 2, nil
}

// batchKeys remembers, for one transaction, the lane and logical key of every item its batch lock
// (WorkLaneKeyItemLockMany) read, so that the batch's finishing statements name keys and lanes by primary key without
// reading the items again. An item's lane and logical key never change.
type batchKeys struct {
	of map[string][2]string
}

func (b *batchKeys) remember(it db.WorkItem) {
	if b == nil {
		return
	}
	if b.of == nil {
		b.of = map[string][2]string{}
	}
	b.of[it.WorkID] = [2]string{it.LaneKey, it.LogicalKey}
}

// keysOf returns work_id → [lane_key, logical_key] for ids, or nil when one of them was not remembered.
func (b *batchKeys) keysOf(ids []string) map[string][2]string {
	if b == nil {
		return nil
	}
	out := make(map[string][2]string, len(ids))
	for _, id := range ids {
		k, ok := b.of[id]
		if !ok {
			return nil
		}
		out[id] = k
	}
	return out
}
