package coordinator_test

import (
	"maps"
	"slices"
	"sort"

	"github.com/powercontext/powercontext/db"
)

// The reference model of the Work Ledger (docs/protocol.md#the-reference-model): the protocol's rules in plain Go,
// no database. Time is database time counted in whole minutes since the sequence began; the test moves it (advance)
// and never sleeps. Every operation returns the error class the ledger must return ("" for success) and changes
// the model exactly as the protocol changes the database. An operation that fails changes nothing (its
// transaction rolled back).

// Error classes the model predicts (errClass maps the ledger's errors onto them).
const (
	eNone     = ""
	eStale    = "stale_work_claim"
	eCancel   = "cancel_requested"
	eLease    = "stale_coordinator_lease"
	eInvalid  = "invalid_argument"
	eIdentity = "key_identity_mismatch"
	eConflict = "state_conflict"
	eSnooze   = "snooze_limit"
	eDomain   = "domain_commit_failed"
	eNotFound = "not_found"
)

// modelItem is one work item.
type modelItem struct {
	ID, Lane, Key   string
	Seq             int64
	Status          string
	AvailableAt     int64 // minutes
	Owner           string
	Fence           int64
	Expires         int64 // minutes; meaningful while Owner != ""
	Attempts        int32 // attempt_count
	GenAttempts     int32 // generation_attempt_count (the retry budget spent)
	Generation      int32 // recovery_generation
	MaxAttempts     int32
	PayloadVersion  int32 // a claim pass takes only heads whose version the worker supports
	CancelRequested bool
	Version         int64
	ResultCode      string
	ErrCategory     string
	ErrCode         string
	Log             []modelAttempt
}

// modelAttempt is one row of the item's attempt history.
type modelAttempt struct {
	No          int32
	Generation  int32
	Owner       string
	Fence       int64
	Outcome     string // "" while the attempt runs
	ErrCategory string
	ErrCode     string
}

// modelLane is a lane: the next position to allocate and the head (0 = idle).
type modelLane struct{ Next, Head int64 }

// modelLease is a scheduler lease row.
type modelLease struct {
	Owner   string
	Fence   int64
	Expires int64
}

// modelClaim is what a worker holds after a claim: the item, owner, fence and attempt number.
type modelClaim struct {
	ID      string
	Lane    string
	Owner   string
	Fence   int64
	Attempt int32
}

// ledgerModel is the whole ledger.
type ledgerModel struct {
	Now    int64
	Lanes  map[string]*modelLane
	Keys   map[string]string // logical key → work id
	Items  map[string]*modelItem
	Leases map[string]*modelLease
	// bug seeds a deliberate divergence (the test proving the checker can fail): "head" forgets to advance a lane
	// head when its item finishes.
	bug string
}

func newLedgerModel() *ledgerModel {
	return &ledgerModel{Lanes: map[string]*modelLane{}, Keys: map[string]string{}, Items: map[string]*modelItem{},
		Leases: map[string]*modelLease{}}
}

// clone deep-copies the model (a batch that fails restores it).
func (m *ledgerModel) clone() *ledgerModel {
	c := &ledgerModel{Now: m.Now, Lanes: map[string]*modelLane{}, Keys: maps.Clone(m.Keys), Items: map[string]*modelItem{},
		Leases: map[string]*modelLease{}, bug: m.bug}
	for k, v := range m.Lanes {
		l := *v
		c.Lanes[k] = &l
	}
	for k, v := range m.Items {
		it := *v
		it.Log = slices.Clone(v.Log)
		c.Items[k] = &it
	}
	for k, v := range m.Leases {
		l := *v
		c.Leases[k] = &l
	}
	return c
}

// advance moves database time forward.
func (m *ledgerModel) advance(minutes int64) { m.Now += minutes }

// head returns the item at the head of lane, or nil when the lane is idle.
func (m *ledgerModel) head(lane string) *modelItem {
	l := m.Lanes[lane]
	if l == nil || l.Head == 0 {
		return nil
	}
	for _, it := range m.Items {
		if it.Lane == lane && it.Seq == l.Head {
			return it
		}
	}
	return nil
}

// enqueue creates the window's item (id newID) or joins the item that holds the logical key. A key held by another
// lane is an identity mismatch. The lease, when given, is asserted first.
func (m *ledgerModel) enqueue(lane, key string, maxAttempts, payloadVersion int32, newID string, lease *modelLeaseToken) (id string, created bool, err string) {
	if lease != nil {
		if e := m.assertLease(*lease); e != eNone {
			return "", false, e
		}
	}
	if id, ok := m.Keys[key]; ok {
		if m.Items[id].Lane != lane {
			return "", false, eIdentity
		}
		return id, false, eNone
	}
	l := m.Lanes[lane]
	if l == nil {
		l = &modelLane{Next: 1}
		m.Lanes[lane] = l
	}
	it := &modelItem{ID: newID, Lane: lane, Key: key, Seq: l.Next, Status: db.StatusQueued, AvailableAt: m.Now,
		MaxAttempts: maxAttempts, PayloadVersion: payloadVersion, Version: 1}
	l.Next++
	if l.Head == 0 {
		l.Head = it.Seq
	}
	m.Items[newID] = it
	m.Keys[key] = newID
	return newID, true, eNone
}

// modelWindow is one window of an EnqueueMany batch.
type modelWindow struct {
	Lane, Key      string
	MaxAttempts    int32
	PayloadVersion int32
}

// enqueueMany runs the windows in ascending lane order (stable), each as enqueue; one refusal fails the batch and
// writes nothing. newIDs maps a window's index to the id its item got when created.
func (m *ledgerModel) enqueueMany(ws []modelWindow, newIDs []string, lease *modelLeaseToken) (ids []string, created []bool, err string) {
	saved := m.clone()
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ws[order[a]].Lane < ws[order[b]].Lane })
	ids, created = make([]string, len(ws)), make([]bool, len(ws))
	if lease != nil {
		if e := m.assertLease(*lease); e != eNone {
			return nil, nil, e
		}
	}
	for _, i := range order {
		id, c, e := m.enqueue(ws[i].Lane, ws[i].Key, ws[i].MaxAttempts, ws[i].PayloadVersion, newIDs[i], nil)
		if e != eNone {
			*m = *saved
			return nil, nil, e
		}
		ids[i], created[i] = id, c
	}
	return ids, created, eNone
}

// due lists the lane heads a claim pass may claim (queued or retry_wait, available now, a payload version up to
// maxVersion: an unsupported head waits) and the heads whose lease has expired (running or cancelling, whatever
// their version), each sorted by id.
func (m *ledgerModel) due(maxVersion int32) (due, expired []string) {
	for lane := range m.Lanes {
		h := m.head(lane)
		if h == nil {
			continue
		}
		switch h.Status {
		case db.StatusQueued, db.StatusRetryWait:
			if h.AvailableAt <= m.Now && h.PayloadVersion <= maxVersion {
				due = append(due, h.ID)
			}
		case db.StatusRunning, db.StatusCancelling:
			if h.Expires <= m.Now {
				expired = append(expired, h.ID)
			}
		}
	}
	sort.Strings(due)
	sort.Strings(expired)
	return due, expired
}

// claim starts a new attempt of a due head for owner: fence and attempt count rise by one, the lease runs until
// now + lease.
func (m *ledgerModel) claim(id, owner string, lease int64) modelClaim {
	it := m.Items[id]
	it.Status = db.StatusRunning
	it.Owner = owner
	it.Fence++
	it.Expires = m.Now + lease
	it.Attempts++
	it.GenAttempts++
	it.Version++
	it.Log = append(it.Log, modelAttempt{No: it.Attempts, Generation: it.Generation, Owner: owner, Fence: it.Fence})
	return modelClaim{ID: id, Lane: it.Lane, Owner: owner, Fence: it.Fence, Attempt: it.Attempts}
}

// expire recovers an expired lease (docs/protocol.md#lease-expiry) and returns the old attempt's outcome: cancelled
// when cancel was requested, lease_expired_retry while the budget lasts (available now), else lease_expired_failed.
// The fence stays; the next claim raises it.
func (m *ledgerModel) expire(id string) string {
	it := m.Items[id]
	it.Owner, it.Expires = "", 0
	it.Version++
	var outcome string
	switch {
	case it.Status == db.StatusCancelling || it.CancelRequested:
		it.Status = db.StatusCancelled
		it.ErrCategory, it.ErrCode = "cancellation", "cancel_requested"
		outcome = db.OutcomeCancelled
	case it.GenAttempts < it.MaxAttempts:
		it.Status = db.StatusRetryWait
		it.AvailableAt = m.Now
		it.ErrCategory, it.ErrCode = "lease", "lease_expired"
		outcome = db.OutcomeLeaseExpiredRetry
	default:
		it.Status = db.StatusFailed
		it.ErrCategory, it.ErrCode = "lease", "lease_expired"
		outcome = db.OutcomeLeaseExpiredFailed
	}
	m.finishAttempt(it, outcome, it.ErrCategory, it.ErrCode)
	if it.Status == db.StatusCancelled {
		m.finishLane(it)
	}
	return outcome
}

func (m *ledgerModel) finishAttempt(it *modelItem, outcome, category, code string) {
	a := &it.Log[len(it.Log)-1]
	a.Outcome, a.ErrCategory, a.ErrCode = outcome, category, code
}

// finishLane deletes a succeeded or cancelled item's key and, when it was the head, moves the head to the lowest
// later item that is not succeeded or cancelled (or leaves the lane idle).
func (m *ledgerModel) finishLane(it *modelItem) {
	if m.Keys[it.Key] == it.ID {
		delete(m.Keys, it.Key)
	}
	l := m.Lanes[it.Lane]
	if l.Head != it.Seq || m.bug == "head" {
		return
	}
	l.Head = 0
	for _, o := range m.Items {
		if o.Lane == it.Lane && o.Seq > it.Seq && o.Status != db.StatusSucceeded && o.Status != db.StatusCancelled &&
			(l.Head == 0 || o.Seq < l.Head) {
			l.Head = o.Seq
		}
	}
}

// verify is the fencing check (docs/protocol.md#fencing): the claim owns the item when owner, fence and attempt
// match, the item runs and the lease has not expired on database time; a pending cancel is reported as such.
func (m *ledgerModel) verify(c modelClaim) string {
	it := m.Items[c.ID]
	if it == nil {
		return eNotFound
	}
	if it.Owner != c.Owner || it.Fence != c.Fence || it.Attempts != c.Attempt {
		return eStale
	}
	if it.Status != db.StatusRunning && it.Status != db.StatusCancelling {
		return eStale
	}
	if m.Now >= it.Expires {
		return eStale
	}
	if it.Status == db.StatusCancelling || it.CancelRequested {
		return eCancel
	}
	return eNone
}

// heartbeat extends the lease to now + lease; a pending cancel extends nothing and is reported.
func (m *ledgerModel) heartbeat(c modelClaim, lease int64) (cancelRequested bool, err string) {
	switch e := m.verify(c); e {
	case eNone:
		m.Items[c.ID].Expires = m.Now + lease
		return false, eNone
	case eCancel:
		return true, eNone
	default:
		return false, e
	}
}

// complete commits a claim: the item succeeds, its attempt finishes, its key goes and the lane head moves on.
// commitFails models a domain commit that returns an error: nothing is written.
func (m *ledgerModel) complete(c modelClaim, code string, commitFails bool) string {
	if e := m.verify(c); e != eNone {
		return e
	}
	if commitFails {
		return eDomain
	}
	it := m.Items[c.ID]
	it.Status = db.StatusSucceeded
	it.Owner, it.Expires = "", 0
	it.ResultCode = code
	it.ErrCategory, it.ErrCode = "", ""
	it.Version++
	m.finishAttempt(it, db.OutcomeSucceeded, "", "")
	m.finishLane(it)
	return eNone
}

// modelCompletion is one completion of a CompleteMany batch.
type modelCompletion struct {
	Claim       modelClaim
	CommitFails bool
}

// completeMany completes the batch in ascending lane order (stable), each as complete on its own: a refused item
// changes nothing and the others still commit. The errors are in the order of cs.
func (m *ledgerModel) completeMany(cs []modelCompletion) []string {
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cs[order[a]].Claim.Lane < cs[order[b]].Claim.Lane })
	out := make([]string, len(cs))
	for _, i := range order {
		out[i] = m.complete(cs[i].Claim, "processed", cs[i].CommitFails)
	}
	return out
}

// cancelRunning finishes a running item whose cancel was requested: cancelled, attempt cancelled, lane finished.
func (m *ledgerModel) cancelRunning(it *modelItem) {
	it.Status = db.StatusCancelled
	it.Owner, it.Expires = "", 0
	it.ErrCategory, it.ErrCode = "cancellation", "cancel_requested"
	it.Version++
	m.finishAttempt(it, db.OutcomeCancelled, it.ErrCategory, it.ErrCode)
	m.finishLane(it)
}

// verifyToFinish verifies c for fail and snooze. done: the caller returns e at once (a stale claim; or a pending
// cancel, which has now cancelled the item and reports no error).
func (m *ledgerModel) verifyToFinish(c modelClaim) (e string, done bool) {
	switch e := m.verify(c); e {
	case eNone:
		return eNone, false
	case eCancel:
		m.cancelRunning(m.Items[c.ID])
		return eNone, true
	default:
		return e, true
	}
}

// fail records a classified failure: retry_wait after delay while retryable and the generation's budget lasts,
// else failed (the key and the head stay: the lane is blocked). A pending cancel wins.
func (m *ledgerModel) fail(c modelClaim, category, code string, retryable bool, delay int64) string {
	if e, done := m.verifyToFinish(c); done {
		return e
	}
	it := m.Items[c.ID]
	it.Owner, it.Expires = "", 0
	it.ErrCategory, it.ErrCode = category, code
	it.Version++
	if retryable && it.GenAttempts < it.MaxAttempts {
		it.Status = db.StatusRetryWait
		it.AvailableAt = m.Now + max(delay, 0)
		m.finishAttempt(it, db.OutcomeRetryWait, category, code)
	} else {
		it.Status = db.StatusFailed
		m.finishAttempt(it, db.OutcomeFailed, category, code)
	}
	return eNone
}

// snooze returns the item to retry_wait at now + delay without spending its budget (the claim's attempt is given
// back); after maxSnoozes snoozed attempts in the generation it changes nothing. A pending cancel wins.
func (m *ledgerModel) snooze(c modelClaim, category, code string, delay int64, maxSnoozes int32) string {
	if e, done := m.verifyToFinish(c); done {
		return e
	}
	it := m.Items[c.ID]
	var snoozed int32
	for _, a := range it.Log {
		if a.Generation == it.Generation && a.Outcome == db.OutcomeSnoozed {
			snoozed++
		}
	}
	if snoozed >= maxSnoozes {
		return eSnooze
	}
	it.Status = db.StatusRetryWait
	it.AvailableAt = m.Now + max(delay, 0)
	it.Owner, it.Expires = "", 0
	it.ErrCategory, it.ErrCode = category, code
	if it.GenAttempts > 0 {
		it.GenAttempts--
	}
	it.Version++
	m.finishAttempt(it, db.OutcomeSnoozed, category, code)
	return eNone
}

// confirmCancelled converges a claim whose cancel was requested; without a pending cancel it is an argument error.
func (m *ledgerModel) confirmCancelled(c modelClaim) string {
	switch e := m.verify(c); e {
	case eCancel:
		m.cancelRunning(m.Items[c.ID])
		return eNone
	case eNone:
		return eInvalid
	default:
		return e
	}
}

// cancel is the operator's cancel with an expected version: queued, retry_wait and failed items are cancelled at
// once (key deleted, head advanced), a running item becomes cancelling; anything else is a conflict.
func (m *ledgerModel) cancel(id string, version int64) string {
	it := m.Items[id]
	if it.Version != version {
		return eConflict
	}
	switch it.Status {
	case db.StatusQueued, db.StatusRetryWait, db.StatusFailed:
		it.Status = db.StatusCancelled
		it.CancelRequested = true
		it.Version++
		m.finishLane(it)
	case db.StatusRunning:
		it.Status = db.StatusCancelling
		it.CancelRequested = true
		it.Version++
	default:
		return eConflict
	}
	return eNone
}

// onFailed applies an operator's action (retry, skip) to an item that is failed at the expected version, and moves
// its version; anything else is a conflict.
func (m *ledgerModel) onFailed(id string, version int64, action func(it *modelItem)) string {
	it := m.Items[id]
	if it.Version != version || it.Status != db.StatusFailed {
		return eConflict
	}
	action(it)
	it.Version++
	return eNone
}

// retry requeues a failed item in a new recovery generation with a fresh budget, errors cleared, available now.
func (m *ledgerModel) retry(id string, version int64) string {
	return m.onFailed(id, version, func(it *modelItem) {
		it.Status = db.StatusQueued
		it.GenAttempts = 0
		it.Generation++
		it.ErrCategory, it.ErrCode = "", ""
		it.AvailableAt = m.Now
	})
}

// skip finishes a failed item as succeeded with result skipped (its failure stays on it): key deleted, head moved.
func (m *ledgerModel) skip(id string, version int64) string {
	return m.onFailed(id, version, func(it *modelItem) {
		it.Status = db.StatusSucceeded
		it.ResultCode = "skipped"
		m.finishLane(it)
	})
}

// modelLeaseToken is a held scheduler lease.
type modelLeaseToken struct {
	Name, Owner string
	Fence       int64
}

// acquireLease renews an unexpired lease of the same owner (fence unchanged), takes over an expired or free one
// (fence + 1), and refuses a lease another owner holds.
func (m *ledgerModel) acquireLease(name, owner string, ttl int64) (modelLeaseToken, bool) {
	l := m.Leases[name]
	if l == nil {
		l = &modelLease{}
		m.Leases[name] = l
	}
	held := l.Owner != "" && m.Now < l.Expires
	switch {
	case held && l.Owner == owner:
	case held:
		return modelLeaseToken{}, false
	default:
		l.Fence++
		l.Owner = owner
	}
	l.Expires = m.Now + ttl
	return modelLeaseToken{Name: name, Owner: owner, Fence: l.Fence}, true
}

// assertLease holds when owner and fence match and the lease has not expired on database time.
func (m *ledgerModel) assertLease(t modelLeaseToken) string {
	l := m.Leases[t.Name]
	if l == nil || l.Owner != t.Owner || l.Fence != t.Fence || m.Now >= l.Expires {
		return eLease
	}
	return eNone
}

// releaseLease frees the lease when owner and fence match (expired or not); the fence stays.
func (m *ledgerModel) releaseLease(t modelLeaseToken) string {
	l := m.Leases[t.Name]
	if l == nil || l.Owner != t.Owner || l.Fence != t.Fence {
		return eLease
	}
	l.Owner, l.Expires = "", 0
	return eNone
}
