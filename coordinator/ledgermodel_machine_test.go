package coordinator_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// The state-machine property test (docs/protocol.md#the-reference-model): rapid generates sequences of ledger
// operations, runs each on the real coordinator API over a real database and on the reference model
// (ledgermodel_test.go), and after every step compares what is observable — items, lane heads and allocators,
// logical keys, attempts, scheduler leases and which held claims may commit — with the model. On a divergence rapid
// shrinks the sequence and prints the minimal one (each step logs what it did).
//
// Database time is moved without sleeping by shifting every stored instant the protocol decides on (available_at,
// lease_expires_at of items and scheduler leases) back by the advanced amount: on the database clock that is the
// same as time passing. The model counts whole minutes; the real time a sequence takes (well under a minute) is the
// only difference, and no decision lies within a minute of a model instant.

// modelChecks is the number of sequences per engine `make test` runs (a few seconds each); `make verify` passes
// -rapid.checks and -rapid.steps to run thousands.
const modelChecks = 25

var modelLanes = []string{"a", "b", "c"}

var modelOwners = []string{"w1", "w2", "w3"}

const modelLeaseName = "model-discovery"

var errDomainCommit = errors.New("model: domain commit refused")

// modelRun is one engine's database and ledgers, shared by the sequences (each starts on emptied ledger tables).
type modelRun struct {
	engine  db.Engine
	store   db.Store
	sqlDB   *sql.DB
	ledgers []*coordinator.Ledger // by coordinator.Path
	bug     string
	seqs    int
	steps   int
}

func TestLedgerModel(t *testing.T) {
	setRapidChecks(t, modelChecks)
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		r := newModelRun(t, engine)
		rapid.Check(t, r.sequence)
		t.Logf("ledger model on %s: %d sequences, %d steps", engine, r.seqs, r.steps)
	})
}

// setRapidChecks sets -rapid.checks to n unless the command line set it, for the duration of the test.
func setRapidChecks(t *testing.T, n int) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if explicit {
		return
	}
	old := flag.Lookup("rapid.checks").Value.String()
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
}

func newModelRun(t testing.TB, engine db.Engine) *modelRun {
	store := enginetest.Open(t, engine)
	r := &modelRun{engine: engine, store: store, sqlDB: enginetest.OpenSQLDB(t, enginetest.URLOf(t, store))}
	for _, p := range []coordinator.Path{coordinator.PathSet, coordinator.PathBatched, coordinator.PathPerItem} {
		l := coordinator.NewLedger(store)
		l.SetPath(p)
		r.ledgers = append(r.ledgers, l)
	}
	return r
}

// heldClaim is a claim a logical worker holds: the real one and the model's.
type heldClaim struct {
	real  coordinator.Claim
	model modelClaim
}

// machine is one generated sequence.
type machine struct {
	r      *modelRun
	m      *ledgerModel
	claims []heldClaim
	tokens []coordinator.LeaseToken
	ctx    context.Context
}

// sequence runs one generated sequence from empty ledger tables.
func (r *modelRun) sequence(rt *rapid.T) {
	ctx := context.Background()
	for _, table := range []string{"pc_work_attempts", "pc_work_items", "pc_work_keys", "pc_work_lanes", "pc_scheduler_leases"} {
		if _, err := r.sqlDB.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			rt.Fatalf("empty %s: %v", table, err)
		}
	}
	r.seqs++
	mc := &machine{r: r, m: newLedgerModel(), ctx: ctx}
	mc.m.bug = r.bug
	rt.Repeat(map[string]func(*rapid.T){
		"enqueue":          mc.enqueue,
		"enqueueMany":      mc.enqueueMany,
		"claim":            mc.claim,
		"heartbeat":        mc.heartbeat,
		"complete":         mc.complete,
		"completeMany":     mc.completeMany,
		"fail":             mc.fail,
		"snooze":           mc.snooze,
		"confirmCancelled": mc.confirmCancelled,
		"cancel":           mc.operator("cancel"),
		"retry":            mc.operator("retry"),
		"skip":             mc.operator("skip"),
		"advance":          mc.advance,
		"acquireLease":     mc.acquireLease,
		"assertLease":      mc.assertLease,
		"releaseLease":     mc.releaseLease,
		"":                 mc.check,
	})
}

func laneKey(lane string) string { return hash("model-lane/" + lane) }

func logicalKey(lane string, window int) string {
	return hash(fmt.Sprintf("model-key/%s/%d", lane, window))
}

func (mc *machine) ledger(rt *rapid.T) (*coordinator.Ledger, string) {
	p := rapid.IntRange(0, len(mc.r.ledgers)-1).Draw(rt, "path")
	return mc.r.ledgers[p], []string{"set", "batched", "per-item"}[p]
}

// window draws a window: its lane, and a logical key that is usually the lane's own (sometimes another lane's, which
// the ledger must refuse when that key is live).
func (mc *machine) window(rt *rapid.T, label string) (lane, key, keyName string, maxAttempts, version int32) {
	lane = rapid.SampledFrom(modelLanes).Draw(rt, label+"lane")
	keyLane := lane
	if rapid.IntRange(0, 9).Draw(rt, label+"foreignKey") == 0 {
		keyLane = rapid.SampledFrom(modelLanes).Draw(rt, label+"keyLane")
	}
	w := rapid.IntRange(0, 3).Draw(rt, label+"window")
	maxAttempts = int32(rapid.IntRange(1, 3).Draw(rt, label+"maxAttempts"))
	version = 1
	if rapid.IntRange(0, 7).Draw(rt, label+"version2") == 0 {
		version = 2 // only the workers that support version 2 may claim it
	}
	return lane, logicalKey(keyLane, w), fmt.Sprintf("%s/%d", keyLane, w), maxAttempts, version
}

func specFor(key string, maxAttempts, version int32) coordinator.SpecFunc {
	return func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
		return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: version, ScopeID: "model", LogicalKey: key,
			Payload: map[string]any{}, MaxAttempts: maxAttempts}, nil
	}
}

// leaseArg draws whether an enqueue asserts a scheduler lease token (one the sequence acquired, maybe stale).
func (mc *machine) leaseArg(rt *rapid.T) (*coordinator.LeaseToken, *modelLeaseToken) {
	if len(mc.tokens) == 0 || !rapid.Bool().Draw(rt, "withLease") {
		return nil, nil
	}
	tok := mc.tokens[rapid.IntRange(0, len(mc.tokens)-1).Draw(rt, "token")]
	return &tok, &modelLeaseToken{Name: tok.Name, Owner: tok.Owner, Fence: tok.Fence}
}

func (mc *machine) enqueue(rt *rapid.T) {
	lane, key, keyName, maxAttempts, version := mc.window(rt, "")
	tok, mtok := mc.leaseArg(rt)
	l, _ := mc.ledger(rt)
	res, err := l.Enqueue(mc.ctx, coordinator.EnqueueRequest{LaneKey: laneKey(lane), Spec: specFor(key, maxAttempts, version), Lease: tok})
	id, created, want := mc.m.enqueue(laneKey(lane), key, maxAttempts, version, res.Item.WorkID, mtok)
	rt.Logf("enqueue lane=%s key=%s max=%d v=%d lease=%v → created=%v err=%v", lane, keyName, maxAttempts, version, tok != nil, res.Created, err)
	mc.expectErr(rt, "enqueue", err, want)
	if err == nil && (res.Created != created || res.Item.WorkID != id) {
		rt.Fatalf("enqueue: created=%v item=%s, model created=%v item=%s", res.Created, res.Item.WorkID, created, id)
	}
	mc.r.steps++
}

func (mc *machine) enqueueMany(rt *rapid.T) {
	n := rapid.IntRange(1, 4).Draw(rt, "windows")
	reqs := make([]coordinator.EnqueueRequest, n)
	ws := make([]modelWindow, n)
	names := make([]string, n)
	for i := range n {
		lane, key, keyName, maxAttempts, version := mc.window(rt, fmt.Sprintf("w%d.", i))
		reqs[i] = coordinator.EnqueueRequest{LaneKey: laneKey(lane), Spec: specFor(key, maxAttempts, version)}
		ws[i] = modelWindow{Lane: laneKey(lane), Key: key, MaxAttempts: maxAttempts, PayloadVersion: version}
		names[i] = fmt.Sprintf("%s:%s/v%d", lane, keyName, version)
	}
	tok, mtok := mc.leaseArg(rt)
	if tok != nil {
		for i := range reqs {
			reqs[i].Lease = tok
		}
	}
	l, path := mc.ledger(rt)
	res, err := l.EnqueueMany(mc.ctx, reqs)
	newIDs := make([]string, n)
	for i := range res {
		newIDs[i] = res[i].Item.WorkID
	}
	ids, created, want := mc.m.enqueueMany(ws, newIDs, mtok)
	rt.Logf("enqueueMany path=%s windows=%v lease=%v → err=%v", path, names, tok != nil, err)
	mc.expectErr(rt, "enqueueMany", err, want)
	if err == nil {
		for i := range res {
			if res[i].Created != created[i] || res[i].Item.WorkID != ids[i] {
				rt.Fatalf("enqueueMany window %d: created=%v item=%s, model created=%v item=%s", i, res[i].Created, res[i].Item.WorkID, created[i], ids[i])
			}
		}
	}
	mc.r.steps++
}

// claim runs one claim pass with N idle slots on one of the paths. Which due heads a pass takes when there are more
// than slots, and which expired heads it recovers once its slots are full, are the engine's choice (candidate
// order): the model checks the choice is allowed and follows it.
func (mc *machine) claim(rt *rapid.T) {
	owner := rapid.SampledFrom(modelOwners).Draw(rt, "owner")
	slots := rapid.IntRange(1, 4).Draw(rt, "slots")
	lease := int64(rapid.IntRange(2, 10).Draw(rt, "leaseMinutes"))
	maxVersion := int32(rapid.IntRange(1, 2).Draw(rt, "maxVersion"))
	l, path := mc.ledger(rt)
	due, expired := mc.m.due(maxVersion)
	res, err := l.Claim(mc.ctx, coordinator.ClaimRequest{Owner: owner, Supported: coordinator.Supported{testKind: {Min: 1, Max: maxVersion}},
		Slots: slots, Lease: time.Duration(lease) * time.Minute})
	rt.Logf("claim path=%s owner=%s slots=%d versions≤%d lease=%dm → %d claims, %d expired (model: %d due, %d expired)", path, owner, slots, maxVersion, lease, len(res.Claims), res.Expired, len(due), len(expired))
	if err != nil {
		rt.Fatalf("claim: %v", err)
	}
	if len(res.Claims) != min(slots, len(due)) {
		rt.Fatalf("claim: %d claims with %d slots and %d due heads", len(res.Claims), slots, len(due))
	}
	seen := map[string]bool{}
	for _, c := range res.Claims {
		if !slices.Contains(due, c.Item.WorkID) || seen[c.Item.WorkID] {
			rt.Fatalf("claim: item %s was not a due head or was claimed twice", c.Item.WorkID)
		}
		seen[c.Item.WorkID] = true
	}
	var recovered []string
	for _, id := range expired {
		it, err := mc.r.store.WorkItemGet(mc.ctx, id)
		if err != nil {
			rt.Fatalf("get: %v", err)
		}
		if it.Status != db.StatusRunning && it.Status != db.StatusCancelling {
			recovered = append(recovered, id)
		}
	}
	if len(res.Claims) < slots && len(recovered) != len(expired) {
		rt.Fatalf("claim: a pass with free slots recovered %d of %d expired heads", len(recovered), len(expired))
	}
	if res.Expired != len(recovered) || len(res.Expirations) != len(recovered) {
		rt.Fatalf("claim: reported %d expirations, recovered %d", res.Expired, len(recovered))
	}
	var want, got []string
	for _, id := range recovered {
		want = append(want, mc.m.expire(id))
	}
	for _, e := range res.Expirations {
		got = append(got, e.Outcome)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		rt.Fatalf("claim: expiration outcomes %v, model %v", got, want)
	}
	for _, c := range res.Claims {
		m := mc.m.claim(c.Item.WorkID, owner, lease)
		if c.Fence != m.Fence || c.AttemptNo != m.Attempt || c.Owner != owner {
			rt.Fatalf("claim %s: fence %d attempt %d, model fence %d attempt %d", c.Item.WorkID, c.Fence, c.AttemptNo, m.Fence, m.Attempt)
		}
		mc.claims = append(mc.claims, heldClaim{real: c, model: m})
	}
	mc.r.steps++
}

// pickClaim draws one of the claims the workers hold (valid, stale or cancelled alike).
func (mc *machine) pickClaim(rt *rapid.T, label string) heldClaim {
	if len(mc.claims) == 0 {
		rt.Skip("no claims")
	}
	return mc.claims[rapid.IntRange(0, len(mc.claims)-1).Draw(rt, label)]
}

func (mc *machine) heartbeat(rt *rapid.T) {
	c := mc.pickClaim(rt, "claim")
	lease := int64(rapid.IntRange(2, 10).Draw(rt, "leaseMinutes"))
	res, err := mc.r.ledgers[0].Heartbeat(mc.ctx, c.real, time.Duration(lease)*time.Minute)
	cancel, want := mc.m.heartbeat(c.model, lease)
	rt.Logf("heartbeat %s lease=%dm → cancel=%v err=%v", c.model, lease, res.CancelRequested, err)
	mc.expectErr(rt, "heartbeat", err, want)
	if err == nil && res.CancelRequested != cancel {
		rt.Fatalf("heartbeat: cancel requested %v, model %v", res.CancelRequested, cancel)
	}
	mc.r.steps++
}

func domainCommit(fails bool) coordinator.DomainCommit {
	if !fails {
		return nil
	}
	return func(context.Context, db.Queries, db.WorkItem, time.Time) error { return errDomainCommit }
}

func (mc *machine) complete(rt *rapid.T) {
	c := mc.pickClaim(rt, "claim")
	fails := rapid.IntRange(0, 5).Draw(rt, "commitFails") == 0
	_, err := mc.r.ledgers[0].Complete(mc.ctx, c.real, coordinator.Result{Code: "processed"}, domainCommit(fails))
	want := mc.m.complete(c.model, "processed", fails)
	mc.step(rt, "complete", err, want, "%s commitFails=%v", c.model, fails)
}

// completeMany completes a batch of held claims (valid, stale and cancelled ones, the same claim possibly twice).
func (mc *machine) completeMany(rt *rapid.T) {
	if len(mc.claims) == 0 {
		rt.Skip("no claims")
	}
	n := rapid.IntRange(1, 4).Draw(rt, "batch")
	cs := make([]coordinator.Completion, n)
	ms := make([]modelCompletion, n)
	names := make([]string, n)
	for i := range n {
		c := mc.pickClaim(rt, fmt.Sprintf("claim%d", i))
		fails := rapid.IntRange(0, 7).Draw(rt, fmt.Sprintf("commitFails%d", i)) == 0
		cs[i] = coordinator.Completion{Claim: c.real, Result: coordinator.Result{Code: "processed"}, Commit: domainCommit(fails)}
		ms[i] = modelCompletion{Claim: c.model, CommitFails: fails}
		names[i] = fmt.Sprintf("%s/fails=%v", c.model, fails)
	}
	l, path := mc.ledger(rt)
	out := l.CompleteMany(mc.ctx, cs)
	want := mc.m.completeMany(ms)
	errs := make([]error, n)
	for i := range out {
		errs[i] = out[i].Err
	}
	rt.Logf("completeMany path=%s %v → %v", path, names, errs)
	for i := range out {
		mc.expectErr(rt, fmt.Sprintf("completeMany[%d]", i), out[i].Err, want[i])
	}
	mc.r.steps++
}

func (mc *machine) fail(rt *rapid.T) {
	c := mc.pickClaim(rt, "claim")
	retryable := rapid.Bool().Draw(rt, "retryable")
	delay := int64(rapid.IntRange(0, 5).Draw(rt, "delayMinutes"))
	_, err := mc.r.ledgers[0].Fail(mc.ctx, c.real, coordinator.Failure{Category: "provider", Code: "unavailable", Retryable: retryable}, time.Duration(delay)*time.Minute)
	want := mc.m.fail(c.model, "provider", "unavailable", retryable, delay)
	mc.step(rt, "fail", err, want, "%s retryable=%v delay=%dm", c.model, retryable, delay)
}

func (mc *machine) snooze(rt *rapid.T) {
	c := mc.pickClaim(rt, "claim")
	delay := int64(rapid.IntRange(0, 5).Draw(rt, "delayMinutes"))
	maxSnoozes := int32(rapid.IntRange(1, 2).Draw(rt, "maxSnoozes"))
	_, err := mc.r.ledgers[0].Snooze(mc.ctx, c.real, coordinator.Failure{Category: "provider", Code: "rate_limited"}, time.Duration(delay)*time.Minute, maxSnoozes)
	want := mc.m.snooze(c.model, "provider", "rate_limited", delay, maxSnoozes)
	mc.step(rt, "snooze", err, want, "%s delay=%dm max=%d", c.model, delay, maxSnoozes)
}

func (mc *machine) confirmCancelled(rt *rapid.T) {
	c := mc.pickClaim(rt, "claim")
	_, err := mc.r.ledgers[0].ConfirmCancelled(mc.ctx, c.real)
	want := mc.m.confirmCancelled(c.model)
	mc.step(rt, "confirmCancelled", err, want, "%s", c.model)
}

// operator runs Cancel, Retry or Skip on an item with its current version (or, sometimes, a stale one).
func (mc *machine) operator(op string) func(*rapid.T) {
	return func(rt *rapid.T) {
		ids := mc.itemIDs()
		if len(ids) == 0 {
			rt.Skip("no items")
		}
		id := rapid.SampledFrom(ids).Draw(rt, "item")
		version := mc.m.Items[id].Version
		if rapid.IntRange(0, 5).Draw(rt, "staleVersion") == 0 {
			version--
		}
		l := mc.r.ledgers[0]
		var err error
		var want string
		switch op {
		case "cancel":
			_, err = l.Cancel(mc.ctx, id, version)
			want = mc.m.cancel(id, version)
		case "retry":
			_, err = l.Retry(mc.ctx, id, version)
			want = mc.m.retry(id, version)
		case "skip":
			_, err = l.Skip(mc.ctx, id, version, func(context.Context, db.Queries, db.WorkItem) (coordinator.Result, coordinator.DomainCommit, error) {
				return coordinator.Result{Code: coordinator.ResultSkipped}, nil, nil
			})
			want = mc.m.skip(id, version)
		}
		mc.step(rt, op, err, want, "%s version=%d", mc.itemName(id), version)
	}
}

// advance moves database time forward by shifting every stored instant the protocol decides on back.
func (mc *machine) advance(rt *rapid.T) {
	minutes := int64(rapid.IntRange(1, 12).Draw(rt, "minutes"))
	shiftDBTime(rt, mc.r.engine, mc.r.sqlDB, time.Duration(minutes)*time.Minute)
	mc.m.advance(minutes)
	rt.Logf("advance %dm → now=%dm", minutes, mc.m.Now)
	mc.r.steps++
}

// shiftDBTime makes d pass on the database clock for the ledger: available_at and lease_expires_at of every item
// and every scheduler lease move back by d (NULL stays NULL).
func shiftDBTime(rt *rapid.T, engine db.Engine, sqlDB *sql.DB, d time.Duration) {
	var stmts []string
	var arg any
	switch engine {
	case db.EnginePostgres:
		arg = d.Microseconds()
		stmts = []string{
			`UPDATE pc_work_items SET available_at = available_at - $1::bigint * interval '1 microsecond', lease_expires_at = lease_expires_at - $1::bigint * interval '1 microsecond'`,
			`UPDATE pc_scheduler_leases SET lease_expires_at = lease_expires_at - $1::bigint * interval '1 microsecond'`,
		}
	case db.EngineMySQL:
		arg = d.Microseconds()
		stmts = []string{
			`UPDATE pc_work_items SET available_at = available_at - INTERVAL ? MICROSECOND, lease_expires_at = lease_expires_at - INTERVAL ? MICROSECOND`,
			`UPDATE pc_scheduler_leases SET lease_expires_at = lease_expires_at - INTERVAL ? MICROSECOND`,
		}
	default:
		arg = d.Microseconds()
		stmts = []string{
			`UPDATE pc_work_items SET available_at = available_at - ?, lease_expires_at = lease_expires_at - ?`,
			`UPDATE pc_scheduler_leases SET lease_expires_at = lease_expires_at - ?`,
		}
	}
	for i, s := range stmts {
		args := []any{arg}
		if i == 0 && engine != db.EnginePostgres {
			args = append(args, arg)
		}
		if _, err := sqlDB.Exec(s, args...); err != nil {
			rt.Fatalf("shift database time: %v", err)
		}
	}
}

func (mc *machine) acquireLease(rt *rapid.T) {
	owner := rapid.SampledFrom([]string{"s1", "s2"}).Draw(rt, "scheduler")
	ttl := int64(rapid.IntRange(2, 10).Draw(rt, "ttlMinutes"))
	res, err := mc.r.ledgers[0].AcquireLease(mc.ctx, modelLeaseName, owner, time.Duration(ttl)*time.Minute)
	if err != nil {
		rt.Fatalf("acquire lease: %v", err)
	}
	tok, ok := mc.m.acquireLease(modelLeaseName, owner, ttl)
	rt.Logf("acquireLease %s ttl=%dm → acquired=%v fence=%d", owner, ttl, res.Acquired, res.Token.Fence)
	if res.Acquired != ok || (ok && res.Token.Fence != tok.Fence) {
		rt.Fatalf("acquire lease: acquired=%v fence=%d, model acquired=%v fence=%d", res.Acquired, res.Token.Fence, ok, tok.Fence)
	}
	if ok {
		mc.tokens = append(mc.tokens, res.Token)
	}
	mc.r.steps++
}

func (mc *machine) assertLease(rt *rapid.T) {
	mc.leaseCall(rt, "assertLease", mc.r.ledgers[0].AssertLease, mc.m.assertLease)
}

func (mc *machine) releaseLease(rt *rapid.T) {
	mc.leaseCall(rt, "releaseLease", mc.r.ledgers[0].ReleaseLease, mc.m.releaseLease)
}

// leaseCall runs a call that takes a lease token (one acquired earlier in the run, drawn) on the ledger and on the
// model, and compares their errors.
func (mc *machine) leaseCall(rt *rapid.T, name string, call func(context.Context, coordinator.LeaseToken) error,
	model func(modelLeaseToken) string) {
	if len(mc.tokens) == 0 {
		rt.Skip("no lease tokens")
	}
	tok := mc.tokens[rapid.IntRange(0, len(mc.tokens)-1).Draw(rt, "token")]
	err := call(mc.ctx, tok)
	want := model(modelLeaseToken{Name: tok.Name, Owner: tok.Owner, Fence: tok.Fence})
	mc.step(rt, name, err, want, "%s fence=%d", tok.Owner, tok.Fence)
}

func (c modelClaim) String() string {
	return fmt.Sprintf("{%s owner=%s fence=%d attempt=%d}", shortID(c.ID), c.Owner, c.Fence, c.Attempt)
}

func shortID(id string) string { return id[:min(8, len(id))] }

func (mc *machine) itemName(id string) string {
	it := mc.m.Items[id]
	return fmt.Sprintf("%s(seq %d, %s)", shortID(id), it.Seq, it.Status)
}

// itemIDs lists the model's items by lane and sequence.
func (mc *machine) itemIDs() []string {
	ids := make([]string, 0, len(mc.m.Items))
	for id := range mc.m.Items {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool {
		x, y := mc.m.Items[ids[a]], mc.m.Items[ids[b]]
		return x.Lane < y.Lane || (x.Lane == y.Lane && x.Seq < y.Seq)
	})
	return ids
}

// errClass names the ledger error the way the model does.
func errClass(err error) string {
	switch {
	case err == nil:
		return eNone
	case errors.Is(err, coordinator.ErrStaleWorkClaim):
		return eStale
	case errors.Is(err, coordinator.ErrCancelRequested):
		return eCancel
	case errors.Is(err, coordinator.ErrStaleCoordinatorLease):
		return eLease
	case errors.Is(err, coordinator.ErrKeyIdentityMismatch):
		return eIdentity
	case errors.Is(err, coordinator.ErrSnoozeLimit):
		return eSnooze
	case errors.Is(err, errDomainCommit):
		return eDomain
	case errors.Is(err, coordinator.ErrInvalidArgument):
		return eInvalid
	case errors.Is(err, coordinator.ErrNotFound):
		return eNotFound
	}
	if _, ok := coordinator.IsStateConflict(err); ok {
		return eConflict
	}
	return "unexpected error: " + err.Error()
}

// step logs one operation (its op name, what it was given, the ledger's error), holds the error to the model's and
// counts the step.
func (mc *machine) step(rt *rapid.T, op string, err error, want string, format string, args ...any) {
	rt.Logf("%s %s → err=%v", op, fmt.Sprintf(format, args...), err)
	mc.expectErr(rt, op, err, want)
	mc.r.steps++
}

func (mc *machine) expectErr(rt *rapid.T, op string, err error, want string) {
	if got := errClass(err); got != want {
		rt.Fatalf("%s: ledger returned %q, model expects %q", op, got, orNone(want))
	}
}

func orNone(s string) string {
	if s == "" {
		return "success"
	}
	return s
}

// check compares everything observable with the model: items (state, position, owner, fence, attempts, budget,
// generation, cancel flag, version, result and error, and their instants relative to database time), attempts,
// lanes, logical keys, the scheduler lease and, for every claim a worker holds, whether it may commit.
func (mc *machine) check(rt *rapid.T) {
	ctx, m, s := mc.ctx, mc.m, mc.r.store
	now, err := s.DBNow(ctx)
	if err != nil {
		rt.Fatalf("db now: %v", err)
	}
	items, err := mc.r.ledgers[0].List(ctx, coordinator.ListParams{Kinds: []string{testKind}, Limit: 1000})
	if err != nil {
		rt.Fatalf("list: %v", err)
	}
	if len(items) != len(m.Items) {
		rt.Fatalf("%d items, model %d", len(items), len(m.Items))
	}
	for _, got := range items {
		want := m.Items[got.WorkID]
		if want == nil {
			rt.Fatalf("item %s is not in the model", got.WorkID)
		}
		type view struct {
			Lane, Key, Status, Owner, Result, ErrCategory, ErrCode string
			Seq, Fence, Version                                    int64
			Attempts, GenAttempts, Generation, MaxAttempts, PV     int32
			CancelRequested                                        bool
		}
		g := view{got.LaneKey, got.LogicalKey, got.Status, got.LeaseOwner, got.ResultCode, got.ErrorCategory, got.ErrorCode,
			got.LaneSequence, got.LeaseFence, got.StateVersion, got.AttemptCount, got.GenerationAttemptCount, got.RecoveryGeneration,
			got.MaxAttempts, got.PayloadVersion, got.CancelRequested}
		w := view{want.Lane, want.Key, want.Status, want.Owner, want.ResultCode, want.ErrCategory, want.ErrCode,
			want.Seq, want.Fence, want.Version, want.Attempts, want.GenAttempts, want.Generation, want.MaxAttempts, want.PayloadVersion, want.CancelRequested}
		if g != w {
			rt.Fatalf("item %s:\n ledger %+v\n model  %+v", mc.itemName(got.WorkID), g, w)
		}
		checkInstant(rt, "available_at of "+mc.itemName(got.WorkID), got.AvailableAt, now, want.AvailableAt-m.Now)
		if want.Owner != "" {
			checkInstant(rt, "lease_expires_at of "+mc.itemName(got.WorkID), got.LeaseExpiresAt, now, want.Expires-m.Now)
		} else if !got.LeaseExpiresAt.IsZero() {
			rt.Fatalf("item %s has a lease expiry without an owner", mc.itemName(got.WorkID))
		}
	}
	mc.checkAttempts(rt)
	mc.checkLanesAndKeys(rt)
	if want := m.Leases[modelLeaseName]; want != nil {
		got, err := s.SchedulerLeaseGet(ctx, modelLeaseName)
		if err != nil {
			rt.Fatalf("scheduler lease: %v", err)
		}
		if got.OwnerID != want.Owner || got.Fence != want.Fence {
			rt.Fatalf("scheduler lease owner %q fence %d, model %q fence %d", got.OwnerID, got.Fence, want.Owner, want.Fence)
		}
		if want.Owner != "" {
			checkInstant(rt, "scheduler lease expiry", got.LeaseExpiresAt, now, want.Expires-m.Now)
		}
	}
	// Who may commit: the ledger's own fencing check (InClaim writes nothing) against the model's, for the most
	// recent claims the workers hold.
	for _, c := range mc.claims[max(0, len(mc.claims)-6):] {
		err := mc.r.ledgers[0].InClaim(ctx, c.real.Item, func(context.Context, db.Queries) error { return nil })
		if got, want := errClass(err), m.verify(c.model); got != want {
			rt.Fatalf("may %s commit? ledger %q, model %q", c.model, orNone(got), orNone(want))
		}
	}
}

// checkInstant checks a stored instant against the model's minutes from now: the real time the sequence took so far
// (under a minute) may have passed on the database clock, nothing else.
func checkInstant(rt *rapid.T, what string, got, now time.Time, minutes int64) {
	d := got.Sub(now)
	w := time.Duration(minutes) * time.Minute
	if d > w+5*time.Millisecond || d <= w-time.Minute {
		rt.Fatalf("%s is %v from database now, model %v", what, d, w)
	}
}

func (mc *machine) checkAttempts(rt *rapid.T) {
	rows, err := mc.r.sqlDB.QueryContext(mc.ctx, `SELECT work_id, attempt_no, recovery_generation, owner_id, fence, outcome, error_category, error_code FROM pc_work_attempts`)
	if err != nil {
		rt.Fatalf("attempts: %v", err)
	}
	defer rows.Close()
	got := map[string][]modelAttempt{}
	for rows.Next() {
		var id string
		var a modelAttempt
		var outcome, category, code sql.NullString
		if err := rows.Scan(&id, &a.No, &a.Generation, &a.Owner, &a.Fence, &outcome, &category, &code); err != nil {
			rt.Fatalf("attempts: %v", err)
		}
		a.Outcome, a.ErrCategory, a.ErrCode = outcome.String, category.String, code.String
		got[id] = append(got[id], a)
	}
	if err := rows.Err(); err != nil {
		rt.Fatalf("attempts: %v", err)
	}
	for id, it := range mc.m.Items {
		g := got[id]
		sort.Slice(g, func(a, b int) bool { return g[a].No < g[b].No })
		if !slices.Equal(g, it.Log) {
			rt.Fatalf("attempts of %s:\n ledger %+v\n model  %+v", mc.itemName(id), g, it.Log)
		}
		delete(got, id)
	}
	if len(got) > 0 {
		rt.Fatalf("attempts of items the model does not have: %v", got)
	}
}

func (mc *machine) checkLanesAndKeys(rt *rapid.T) {
	rows, err := mc.r.sqlDB.QueryContext(mc.ctx, `SELECT lane_key, next_sequence, head_sequence FROM pc_work_lanes`)
	if err != nil {
		rt.Fatalf("lanes: %v", err)
	}
	lanes := map[string]modelLane{}
	for rows.Next() {
		var k string
		var next int64
		var head sql.NullInt64
		if err := rows.Scan(&k, &next, &head); err != nil {
			rt.Fatalf("lanes: %v", err)
		}
		if next == 1 && !head.Valid {
			// A lane row is created autocommitted before the enqueue that needs it (docs/protocol.md#creating-rows);
			// a lane that never received an item is the same as no lane.
			continue
		}
		lanes[k] = modelLane{Next: next, Head: head.Int64}
	}
	_ = rows.Close()
	want := map[string]modelLane{}
	for k, l := range mc.m.Lanes {
		want[k] = *l
	}
	if !maps.Equal(lanes, want) {
		rt.Fatalf("lanes (next, head):\n ledger %v\n model  %v", lanes, want)
	}
	rows, err = mc.r.sqlDB.QueryContext(mc.ctx, `SELECT logical_key, work_id FROM pc_work_keys`)
	if err != nil {
		rt.Fatalf("keys: %v", err)
	}
	keys := map[string]string{}
	for rows.Next() {
		var k, id string
		if err := rows.Scan(&k, &id); err != nil {
			rt.Fatalf("keys: %v", err)
		}
		keys[k] = id
	}
	_ = rows.Close()
	if !maps.Equal(keys, mc.m.Keys) {
		rt.Fatalf("logical keys:\n ledger %v\n model  %v", keys, mc.m.Keys)
	}
}
