//go:build linux

package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// History checking (docs/protocol.md#history-checking). The load records every client-visible
// operation with the times it was sent and answered: captures with their journal positions, flushes answered 200
// (idle or processed), memory_flush operations read as succeeded and the latest Memory revision read. After the
// drain the harness adds what the database committed (every Memory revision and every Experience commit, as windows)
// and the final state of every scope, and porcupine checks that the whole history is linearizable against
// scopeModel: one sequential journal → memory/experience windows machine per scope.

// histKind is what a history operation did.
type histKind uint8

const (
	hCapture          histKind = iota // POST /v1/sources answered with a journal position (or landed without an answer)
	hFlushIdle                        // POST /v1/memory/flush answered 200 idle
	hFlushProcessed                   // POST /v1/memory/flush answered 200 processed
	hOperationRead                    // GET /v1/operations/{id}: a succeeded memory_flush
	hRevisionRead                     // GET /v1/memory/revisions?limit=1: the latest revision and its window
	hMemoryCommit                     // a Memory revision in the database
	hExperienceCommit                 // an Experience commit (its candidates) in the database
	hFinal                            // the scope's cursors, head and latest revision read after the drain
	// hFlushHead is the second observation of a flush answered processed, added by toPorcupine: its high
	// watermark, the journal head the server read after the window finished (not recorded by the load).
	hFlushHead
)

// histOp is one operation of a scope's history: the model's input (porcupine's Output is unused).
type histOp struct {
	Kind   histKind
	Scope  string
	Client int
	Call   time.Time
	Return time.Time
	Note   string // source id, operation id or work id, for the visualisation

	Pos                int64 // hCapture: the journal position (0 while unknown: no answer, filled from the database)
	Prev, Cur, HW, Rev int64 // flushes and reads: previous/current cursor, high watermark, revision
	After, Through     int64 // hRevisionRead (Through), commits: the window (After, Through]
	Gen                int64 // commits: the cursor generation the window was computed at
	Final              scopeState
}

// scopeState is the model's state of one scope: the journal head, the memory cursor (position, generation) with the
// latest Memory revision, and the Experience cursor.
type scopeState struct {
	Head          int64
	Cursor, Gen   int64
	Rev           int64
	XCursor, XGen int64
}

// stepScope is the sequential specification of a scope. A capture appends at head+1. A window commit must start at
// the cursor it was computed from (position and generation), end within the journal and, for Memory, write the next
// revision number; it compare-and-sets the cursor to (through, generation+1): so a window is committed at most once,
// in cursor order, with dense revision numbers. A flush answered idle saw nothing pending (the memory cursor at the
// journal head, so every Source captured before it is in Memory). A flush answered processed makes two observations
// (toPorcupine splits it), each at its own point of the request: its window as the latest commit (cursor and
// revision), and its high watermark as the journal head — so every capture answered before the flush was sent has a
// position ≤ the high watermark, and a flush that joined a window computed before such a capture must answer
// current_cursor < high_watermark. A succeeded operation is never read before its commit; a revision read names the
// latest revision and its window; the final read is the database's state after the drain.
func stepScope(s scopeState, op histOp) (bool, scopeState) {
	switch op.Kind {
	case hCapture:
		if op.Pos != s.Head+1 {
			return false, s
		}
		s.Head = op.Pos
		return true, s
	case hFlushIdle:
		return s.Cursor == s.Head, s
	case hFlushProcessed:
		return s.Cursor == op.Cur && s.Rev == op.Rev && op.Prev < op.Cur && op.Cur <= op.HW, s
	case hFlushHead:
		return op.HW == s.Head, s
	case hOperationRead:
		return s.Cursor >= op.Cur && s.Rev >= op.Rev, s
	case hRevisionRead:
		return s.Rev == op.Rev && s.Cursor == op.Through, s
	case hMemoryCommit:
		if s.Cursor != op.After || s.Gen != op.Gen || op.Through <= op.After || op.Through > s.Head || op.Rev != s.Rev+1 {
			return false, s
		}
		s.Cursor, s.Gen, s.Rev = op.Through, op.Gen+1, op.Rev
		return true, s
	case hExperienceCommit:
		if s.XCursor != op.After || s.XGen != op.Gen || op.Through <= op.After || op.Through > s.Head {
			return false, s
		}
		s.XCursor, s.XGen = op.Through, op.Gen+1
		return true, s
	case hFinal:
		return s == op.Final, s
	}
	return false, s
}

func (op histOp) String() string {
	switch op.Kind {
	case hCapture:
		return fmt.Sprintf("capture %s → %d", op.Note, op.Pos)
	case hFlushIdle:
		return "flush → 200 idle"
	case hFlushProcessed:
		return fmt.Sprintf("flush → 200 processed (%d,%d] hw %d rev %d", op.Prev, op.Cur, op.HW, op.Rev)
	case hFlushHead:
		return fmt.Sprintf("flush → 200 processed: journal head %d", op.HW)
	case hOperationRead:
		return fmt.Sprintf("operation %s → succeeded cursor %d rev %d", op.Note, op.Cur, op.Rev)
	case hRevisionRead:
		return fmt.Sprintf("latest revision → %d through %d", op.Rev, op.Through)
	case hMemoryCommit:
		return fmt.Sprintf("db: memory (%d,%d] gen %d rev %d", op.After, op.Through, op.Gen, op.Rev)
	case hExperienceCommit:
		return fmt.Sprintf("db: experience (%d,%d] gen %d", op.After, op.Through, op.Gen)
	case hFinal:
		return "db: final " + op.Final.String()
	}
	return "?"
}

func (s scopeState) String() string {
	return fmt.Sprintf("head %d memory %d/g%d rev %d experience %d/g%d", s.Head, s.Cursor, s.Gen, s.Rev, s.XCursor, s.XGen)
}

// partitionByScope splits a history into one partition per scope, in scope order.
func partitionByScope(history []porcupine.Operation) [][]porcupine.Operation {
	by := map[string][]porcupine.Operation{}
	for _, op := range history {
		s := op.Input.(histOp).Scope
		by[s] = append(by[s], op)
	}
	scopes := make([]string, 0, len(by))
	for s := range by {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	out := make([][]porcupine.Operation, len(scopes))
	for i, s := range scopes {
		out[i] = by[s]
	}
	return out
}

// scopeModel is the porcupine model: per-scope partitions, each starting from the empty scope.
var scopeModel = porcupine.Model{
	Partition: partitionByScope,
	Init:      func() interface{} { return scopeState{} },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		return stepScope(state.(scopeState), input.(histOp))
	},
	Equal:             func(a, b interface{}) bool { return a.(scopeState) == b.(scopeState) },
	DescribeOperation: func(input, _ interface{}) string { return input.(histOp).String() },
	DescribeState:     func(state interface{}) string { return state.(scopeState).String() },
}

// history is the record of one round's client-visible operations.
type history struct {
	mu  sync.Mutex
	ops []histOp
}

func (h *history) add(op histOp) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

func (h *history) list() []histOp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]histOp(nil), h.ops...)
}

// historyVerdict is the outcome of checking one round's history.
type historyVerdict struct {
	Result     porcupine.CheckResult
	Ops        int
	Scopes     int
	Reads      int      // flushes answered 200, operations and revisions read: the operations that observe the state
	Commits    int      // Memory and Experience commits from the database
	Unanswered int      // captures that landed without an answer (they may take effect until the final read)
	Illegal    []string // scopes whose history is not linearizable
	Path       string   // porcupine's visualisation of the illegal scopes
	Took       time.Duration
	Err        error
}

// kinds counts the operations of a history by kind, for the round's detail line.
func kinds(ops []histOp) string {
	names := []string{"captures", "flush_idle", "flush_processed", "operation_reads", "revision_reads", "memory_commits",
		"experience_commits", "finals"}
	n := make([]int, len(names))
	for _, op := range ops {
		if int(op.Kind) < len(n) {
			n[op.Kind]++
		}
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%d", name, n[i])
	}
	return strings.Join(parts, " ")
}

// ok: checked, linearizable, and not blind (the load's observations and the database's commits were recorded).
func (v historyVerdict) ok() bool {
	return v.Err == nil && v.Result == porcupine.Ok && v.Reads > 0 && v.Commits > 0
}

// line is the verdict as printed beside the SQL counts.
func (v historyVerdict) line() string {
	switch {
	case v.Err != nil:
		return "history=error"
	case v.Result == porcupine.Ok:
		return fmt.Sprintf("history=linearizable(%d ops, %d scopes)", v.Ops, v.Scopes)
	case v.Result == porcupine.Unknown:
		return fmt.Sprintf("history=unknown(timed out after %s, %d ops)", v.Took.Round(time.Second), v.Ops)
	}
	return fmt.Sprintf("history=ILLEGAL(%d of %d scopes)", len(v.Illegal), v.Scopes)
}

// detail names what a failing history needs a developer to look at.
func (v historyVerdict) detail() string {
	switch {
	case v.Err != nil:
		return v.Err.Error()
	case v.Result == porcupine.Unknown:
		return "porcupine did not finish within its timeout"
	case v.Result == porcupine.Ok && (v.Reads == 0 || v.Commits == 0):
		return fmt.Sprintf("blind: %d observations and %d commits recorded", v.Reads, v.Commits)
	case v.Result == porcupine.Illegal:
		shown := v.Illegal
		if len(shown) > 5 {
			shown = shown[:5]
		}
		return fmt.Sprintf("not linearizable in scope %s; visualisation %s", strings.Join(shown, ", "), v.Path)
	}
	return ""
}

// checkHistory checks ops (client operations and database commits) with porcupine, partitioned by scope. A history
// that is not linearizable is written as porcupine's HTML visualisation (only its illegal scopes) to a file under
// dir (os.TempDir when empty) named after label; the path is in the verdict.
func checkHistory(ops []histOp, timeout time.Duration, dir, label string) historyVerdict {
	started := time.Now()
	history := toPorcupine(ops)
	res, info := porcupine.CheckOperationsVerbose(scopeModel, history, timeout)
	parts := partitionByScope(history)
	v := historyVerdict{Result: res, Ops: len(ops), Scopes: len(parts), Took: time.Since(started)}
	for _, op := range ops {
		switch op.Kind {
		case hFlushIdle, hFlushProcessed, hOperationRead, hRevisionRead:
			v.Reads++
		case hMemoryCommit, hExperienceCommit:
			v.Commits++
		}
	}
	if res != porcupine.Illegal {
		return v
	}
	// A partition is illegal when no partial linearization covers all of its operations.
	partials := info.PartialLinearizations()
	var bad []histOp
	for i, part := range parts {
		longest := 0
		if i < len(partials) {
			for _, l := range partials[i] {
				longest = max(longest, len(l))
			}
		}
		if longest < len(part) {
			scope := part[0].Input.(histOp).Scope
			v.Illegal = append(v.Illegal, scope)
			if len(v.Illegal) <= 3 {
				for _, op := range part {
					if h := op.Input.(histOp); h.Kind != hFlushHead { // toPorcupine adds it again
						bad = append(bad, h)
					}
				}
			}
		}
	}
	f, err := os.CreateTemp(dir, "powercontext-history-"+strings.NewReplacer("/", "-", " ", "-").Replace(label)+"-*.html")
	if err != nil {
		v.Err = fmt.Errorf("history not linearizable; visualisation not written: %w", err)
		return v
	}
	_, vinfo := porcupine.CheckOperationsVerbose(scopeModel, toPorcupine(bad), timeout)
	if err := porcupine.Visualize(scopeModel, vinfo, f); err != nil {
		v.Err = fmt.Errorf("history not linearizable; visualisation failed: %w", err)
	}
	_ = f.Close()
	v.Path = f.Name()
	return v
}

// toPorcupine converts a history to porcupine's operations (times in nanoseconds since the first call). A flush
// answered processed becomes two operations over the same interval: its window (hFlushProcessed) and its high
// watermark read as the journal head (hFlushHead) — the server reads them at different moments of the request.
func toPorcupine(ops []histOp) []porcupine.Operation {
	var origin time.Time
	for _, op := range ops {
		if origin.IsZero() || op.Call.Before(origin) {
			origin = op.Call
		}
	}
	out := make([]porcupine.Operation, 0, len(ops))
	add := func(op histOp) {
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: op, Call: op.Call.Sub(origin).Nanoseconds(),
			Return: op.Return.Sub(origin).Nanoseconds()})
	}
	for _, op := range ops {
		add(op)
		if op.Kind == hFlushProcessed {
			head := op
			head.Kind = hFlushHead
			add(head)
		}
	}
	return out
}

// Client ids of the operations the database contributes (the load's clients are 0..loaders-1).
const (
	clientMemoryCommits = 100 + iota
	clientExperienceCommits
	clientFinal
)

// completeHistory adds to the load's operations what the database holds after the drain: the position of every
// capture that landed without an answer (its effect may fall anywhere up to now; one that never landed is dropped),
// every Memory revision and Experience commit as a window commit that may have happened at any time during the round,
// and one final read per scope. start is when the load began.
func completeHistory(ctx context.Context, sqlDB *sql.DB, client []histOp, start time.Time) ([]histOp, int, error) {
	at := time.Now()
	positions := map[string]int64{}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, source_id, journal_position FROM pc_sources`, func(rs *sql.Rows) error {
		var scope, id string
		var pos int64
		if err := rs.Scan(&scope, &id, &pos); err != nil {
			return err
		}
		positions[scope+"\x00"+id] = pos
		return nil
	}); err != nil {
		return nil, 0, err
	}
	ops := make([]histOp, 0, len(client)+len(positions)/2)
	unanswered := 0
	for _, op := range client {
		if op.Kind == hCapture && op.Pos == 0 {
			pos, ok := positions[op.Scope+"\x00"+op.Note]
			if !ok {
				continue // never landed: it did not happen
			}
			op.Pos, op.Return = pos, at
			unanswered++
		}
		ops = append(ops, op)
	}
	scopes := map[string]bool{}
	for _, op := range client {
		scopes[op.Scope] = true
	}
	for k := range positions {
		scopes[k[:strings.IndexByte(k, 0)]] = true
	}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, work_id, revision, cursor_generation, window_after, window_through
			FROM pc_memory_revisions`, func(rs *sql.Rows) error {
		op := histOp{Kind: hMemoryCommit, Client: clientMemoryCommits, Call: start, Return: at}
		if err := rs.Scan(&op.Scope, &op.Note, &op.Rev, &op.Gen, &op.After, &op.Through); err != nil {
			return err
		}
		ops = append(ops, op)
		scopes[op.Scope] = true
		return nil
	}); err != nil {
		return nil, 0, err
	}
	// Experience: a commit is one transaction of one attempt, which writes the window's candidates with one
	// created_at; a processed item without a candidate committed its window too (the cursor moved).
	payloads := map[string]windowPayload{}
	processed := map[string]string{} // work id → scope, of processed experience items
	if err := queryAll(ctx, sqlDB, `SELECT work_id, scope_id, status, result_code, payload FROM pc_work_items WHERE kind = '`+
		experienceKind+`'`, func(rs *sql.Rows) error {
		var workID, scope, status string
		var code sql.NullString
		var payload []byte
		if err := rs.Scan(&workID, &scope, &status, &code, &payload); err != nil {
			return err
		}
		var p windowPayload
		if err := json.Unmarshal(payload, &p); err != nil {
			return fmt.Errorf("experience item %s: payload %q: %w", workID, payload, err)
		}
		payloads[workID] = p
		if status == "succeeded" && code.String == "processed" {
			processed[workID] = scope
		}
		return nil
	}); err != nil {
		return nil, 0, err
	}
	commits := map[string]histOp{}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, work_id, created_at FROM pc_experience_candidates`, func(rs *sql.Rows) error {
		var scope, workID string
		var created time.Time
		if err := rs.Scan(&scope, &workID, &created); err != nil {
			return err
		}
		p, ok := payloads[workID]
		if !ok {
			return fmt.Errorf("experience candidate of %s: no work item %s", scope, workID)
		}
		commits[workID+"@"+created.UTC().Format(time.RFC3339Nano)] = histOp{Kind: hExperienceCommit, Scope: scope,
			Client: clientExperienceCommits, Call: start, Return: at, Note: workID, After: p.After, Through: p.Through, Gen: p.CursorGeneration}
		delete(processed, workID)
		return nil
	}); err != nil {
		return nil, 0, err
	}
	for workID, scope := range processed {
		p := payloads[workID]
		commits[workID] = histOp{Kind: hExperienceCommit, Scope: scope, Client: clientExperienceCommits, Call: start,
			Return: at, Note: workID, After: p.After, Through: p.Through, Gen: p.CursorGeneration}
	}
	for _, op := range commits {
		ops = append(ops, op)
	}
	// The final state of every scope.
	finals := map[string]*scopeState{}
	final := func(scope string) *scopeState {
		if finals[scope] == nil {
			finals[scope] = &scopeState{}
		}
		return finals[scope]
	}
	for s := range scopes {
		final(s)
	}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, position FROM pc_source_journal_heads`, func(rs *sql.Rows) error {
		var scope string
		var pos int64
		if err := rs.Scan(&scope, &pos); err != nil {
			return err
		}
		final(scope).Head = pos
		return nil
	}); err != nil {
		return nil, 0, err
	}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, cursor_name, position, generation FROM pc_source_cursors`, func(rs *sql.Rows) error {
		var scope, name string
		var pos, gen int64
		if err := rs.Scan(&scope, &name, &pos, &gen); err != nil {
			return err
		}
		switch name {
		case memoryCursor:
			final(scope).Cursor, final(scope).Gen = pos, gen
		case experienceCursor:
			final(scope).XCursor, final(scope).XGen = pos, gen
		}
		return nil
	}); err != nil {
		return nil, 0, err
	}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, MAX(revision) FROM pc_memory_revisions GROUP BY scope_id`, func(rs *sql.Rows) error {
		var scope string
		var rev int64
		if err := rs.Scan(&scope, &rev); err != nil {
			return err
		}
		final(scope).Rev = rev
		return nil
	}); err != nil {
		return nil, 0, err
	}
	done := time.Now()
	for scope, s := range finals {
		ops = append(ops, histOp{Kind: hFinal, Scope: scope, Client: clientFinal, Call: at, Return: done, Final: *s})
	}
	return ops, unanswered, nil
}

// historyDir is where failing histories are written: $E2E_ARTIFACTS when set (CI uploads it), else the temporary
// directory.
func historyDir() string {
	if d := os.Getenv("E2E_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o750); err == nil {
			return d
		}
	}
	return filepath.Clean(os.TempDir())
}
