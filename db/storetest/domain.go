package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// RunDomainQueries exercises every db.DomainQueries method (Sources, journal heads, cursors, Memory entries,
// Experience candidates) against stores returned by open. Like RunQueries, each subtest gets its own fresh store and
// runs in parallel with the others.
func RunDomainQueries(t *testing.T, open func(t *testing.T) db.Store) {
	t.Helper()

	tests := []struct {
		name string
		fn   func(t *testing.T, s db.Store)
	}{
		{"SourceJournalHead", testSourceJournalHead},
		{"SourceJournalHeadListPending", testSourceJournalHeadListPending},
		{"Source", testSource},
		{"SourceCursor", testSourceCursor},
		{"MemoryEntry", testMemoryEntry},
		{"MemoryEntrySearch", testMemoryEntrySearch},
		{"ExperienceCandidate", testExperienceCandidate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// Cursor names of the domain (docs/protocol.md#windows-and-cursors).
const (
	cursorMemory     = "memory-source-window"
	cursorExperience = "experience-incubation"
)

// --- sources and the journal --------------------------------------------------------------------------------------

func testSourceJournalHead(t *testing.T, s db.Store) {
	ctx := context.Background()
	scope := "scope-" + randHex(t, 8)

	_, err := s.SourceJournalHeadGet(ctx, scope)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.ErrorIs(t, s.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: 1, UpdatedAt: time.Now()}),
		db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.SourceJournalHeadLock(ctx, scope)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))

	// Insert-if-absent creates an empty head (position 0) stamped with the database clock, once.
	before := dbNow(t, s)
	inserted, err := s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	require.False(t, inserted)
	head, err := s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, scope, head.ScopeID)
	require.Zero(t, head.Position)
	requireUTC(t, head.UpdatedAt)
	requireNear(t, before, head.UpdatedAt, clockSlack)

	// Byte-exact scope ids: a case variant is another head.
	upper := "SCOPE-" + scope[len("scope-"):]
	inserted, err = s.SourceJournalHeadInsertIfAbsent(ctx, upper)
	require.NoError(t, err)
	require.True(t, inserted)

	// Lock, advance and read back inside one transaction; the variant is untouched.
	at := us(dbNow(t, s)).Add(123 * time.Microsecond)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, err := q.SourceJournalHeadLock(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, head, locked)
		require.NoError(t, q.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: 3, UpdatedAt: at}))
		got, err := q.SourceJournalHeadGet(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, db.SourceJournalHead{ScopeID: scope, Position: 3, UpdatedAt: at}, got)
		return nil
	}))
	got, err := s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, db.SourceJournalHead{ScopeID: scope, Position: 3, UpdatedAt: at}, got)
	other, err := s.SourceJournalHeadGet(ctx, upper)
	require.NoError(t, err)
	require.Zero(t, other.Position)

	// An existing head is not reset by a later insert-if-absent.
	inserted, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	require.False(t, inserted)
	got, err = s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Position)

	// A rolled-back update leaves the head as it was.
	errRollback := errors.New("rollback")
	require.ErrorIs(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if _, err := q.SourceJournalHeadLock(ctx, scope); err != nil {
			return err
		}
		if err := q.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: 9, UpdatedAt: at}); err != nil {
			return err
		}
		return errRollback
	}), errRollback)
	got, err = s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Position)
}

func testSourceJournalHeadListPending(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))

	// Heads (byte order of scope ids: "B" < "a" < "b" < "c" < "d" < "é").
	heads := map[string]int64{"a": 0, "B": 1, "b": 5, "c": 3, "d": 7, "é": 2}
	for scope, pos := range heads {
		inserted, err := s.SourceJournalHeadInsertIfAbsent(ctx, scope)
		require.NoError(t, err)
		require.True(t, inserted)
		if pos > 0 {
			require.NoError(t, s.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: pos, UpdatedAt: now}))
		}
	}
	// Cursors: under cursorMemory, b is caught up, c is behind, the others have none (missing = 0).
	// Under cursorExperience only d is caught up.
	for _, c := range []db.SourceCursor{
		{ScopeID: "b", CursorName: cursorMemory, Position: 5, Generation: 2, UpdatedAt: now},
		{ScopeID: "c", CursorName: cursorMemory, Position: 1, Generation: 1, UpdatedAt: now},
		{ScopeID: "d", CursorName: cursorExperience, Position: 7, Generation: 1, UpdatedAt: now},
		{ScopeID: "a", CursorName: cursorExperience, Position: 0, Generation: 0, UpdatedAt: now},
	} {
		require.NoError(t, s.SourceCursorInsert(ctx, c))
	}

	scopes := func(hs []db.SourceJournalHead) []string {
		out := make([]string, 0, len(hs))
		for _, h := range hs {
			requireUTC(t, h.UpdatedAt)
			require.Equal(t, heads[h.ScopeID], h.Position, h.ScopeID)
			out = append(out, h.ScopeID)
		}
		return out
	}
	list := func(cursorName, after string, limit int32) []string {
		t.Helper()
		hs, err := s.SourceJournalHeadListPending(ctx, cursorName, after, limit)
		require.NoError(t, err)
		return scopes(hs)
	}

	require.Equal(t, []string{"B", "c", "d", "é"}, list(cursorMemory, "", 10))
	require.Equal(t, []string{"B", "b", "c", "é"}, list(cursorExperience, "", 10))
	require.Equal(t, []string{"B", "b", "c", "d", "é"}, list("no-such-cursor", "", 10), "a missing cursor counts as 0")

	// Keyset pages: strictly after the given scope id, in byte order, at most limit rows.
	require.Equal(t, []string{"B", "c"}, list(cursorMemory, "", 2))
	require.Equal(t, []string{"d", "é"}, list(cursorMemory, "c", 2))
	require.Equal(t, []string{"c", "d"}, list(cursorMemory, "B", 2))
	require.Equal(t, []string{"c"}, list(cursorMemory, "b", 1))
	require.Empty(t, list(cursorMemory, "é", 10))
	require.Equal(t, []string{"é"}, list(cursorMemory, "z", 10), "non-ASCII ids sort after ASCII (byte order)")

	// Advancing the cursor to the head removes the scope from the pending set.
	n, err := s.SourceCursorAdvance(ctx, db.SourceCursor{ScopeID: "c", CursorName: cursorMemory, Position: 3, Generation: 2, UpdatedAt: now}, 1, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, []string{"B", "d", "é"}, list(cursorMemory, "", 10))
}

func newSource(scope string, pos int64, at time.Time) db.Source {
	return db.Source{
		ScopeID:         scope,
		JournalPosition: pos,
		SourceID:        "src-" + string(rune('a'+pos)),
		SourceType:      "note",
		Content:         "content é " + string(rune('a'+pos)),
		Metadata:        []byte(`{"k":"v","n":` + string(rune('0'+pos%10)) + `}`),
		CreatedAt:       at.Add(time.Duration(pos) * time.Microsecond),
	}
}

func positions(ss []db.Source) []int64 {
	out := make([]int64, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.JournalPosition)
	}
	return out
}

func testSource(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	_, err := s.SourceGetByID(ctx, scope, "src-b")
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.SourceListAfter(ctx, scope, 0, 10)
	require.NoError(t, err)
	require.Empty(t, list)

	// Capture five Sources the way the domain does: head insert-if-absent, then lock, insert and advance in one tx.
	_, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	var sources []db.Source
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		head, err := q.SourceJournalHeadLock(ctx, scope)
		require.NoError(t, err)
		for pos := head.Position + 1; pos <= 5; pos++ {
			src := newSource(scope, pos, now)
			require.NoError(t, q.SourceInsert(ctx, src))
			sources = append(sources, src)
		}
		head.Position = 5
		head.UpdatedAt = now
		return q.SourceJournalHeadUpdate(ctx, head)
	}))
	// The case variant of the scope is another journal: same source ids and positions do not conflict.
	for pos := int64(1); pos <= 2; pos++ {
		require.NoError(t, s.SourceInsert(ctx, newSource(upper, pos, now)))
	}

	got, err := s.SourceGetByID(ctx, scope, "src-b")
	require.NoError(t, err)
	require.Equal(t, sources[0], got)
	requireUTC(t, got.CreatedAt)
	_, err = s.SourceGetByID(ctx, scope, "SRC-B")
	require.ErrorIs(t, err, db.ErrNotFound, "source ids are byte-exact")
	_, err = s.SourceGetByID(ctx, scope, "src-z")
	require.ErrorIs(t, err, db.ErrNotFound)

	// Duplicate (scope, source_id) at a new position, and a new source id at a taken position, are conflicts.
	dupID := newSource(scope, 6, now)
	dupID.SourceID = sources[1].SourceID
	require.ErrorIs(t, s.SourceInsert(ctx, dupID), db.ErrConflict)
	dupPos := newSource(scope, 3, now)
	dupPos.SourceID = "src-new"
	require.ErrorIs(t, s.SourceInsert(ctx, dupPos), db.ErrConflict)
	_, err = s.SourceGetByID(ctx, scope, "src-new")
	require.ErrorIs(t, err, db.ErrNotFound)

	// Windows (after, through] in journal order.
	rangeOf := func(scope string, after, through int64) []int64 {
		t.Helper()
		ss, err := s.SourceListRange(ctx, scope, after, through)
		require.NoError(t, err)
		return positions(ss)
	}
	all, err := s.SourceListRange(ctx, scope, 0, 5)
	require.NoError(t, err)
	require.Equal(t, sources, all)
	require.Equal(t, []int64{2, 3}, rangeOf(scope, 1, 3))
	require.Equal(t, []int64{5}, rangeOf(scope, 4, 100))
	require.Empty(t, rangeOf(scope, 3, 3))
	require.Empty(t, rangeOf(scope, 5, 10))
	require.Equal(t, []int64{1, 2}, rangeOf(upper, 0, 10))

	afterOf := func(after int64, limit int32) []int64 {
		t.Helper()
		ss, err := s.SourceListAfter(ctx, scope, after, limit)
		require.NoError(t, err)
		return positions(ss)
	}
	require.Equal(t, []int64{1, 2}, afterOf(0, 2))
	require.Equal(t, []int64{3, 4, 5}, afterOf(2, 10))
	require.Equal(t, []int64{5}, afterOf(4, 1))
	require.Empty(t, afterOf(5, 10))
	ss, err := s.SourceListAfter(ctx, scope, 3, 10)
	require.NoError(t, err)
	require.Equal(t, sources[3:], ss)
}

func testSourceCursor(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)

	_, err := s.SourceCursorGet(ctx, scope, cursorMemory)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.SourceCursorLock(ctx, scope, cursorMemory)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	n, err := s.SourceCursorAdvance(ctx, db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 1, Generation: 1, UpdatedAt: now}, 0, 0)
	require.NoError(t, err)
	require.Zero(t, n, "advancing a missing cursor changes nothing")

	c := db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 0, Generation: 0, UpdatedAt: now.Add(time.Microsecond)}
	require.NoError(t, s.SourceCursorInsert(ctx, c))
	require.ErrorIs(t, s.SourceCursorInsert(ctx, c), db.ErrConflict)
	other := db.SourceCursor{ScopeID: scope, CursorName: cursorExperience, Position: 4, Generation: 9, UpdatedAt: now}
	require.NoError(t, s.SourceCursorInsert(ctx, other))
	got, err := s.SourceCursorGet(ctx, scope, cursorMemory)
	require.NoError(t, err)
	require.Equal(t, c, got)
	requireUTC(t, got.UpdatedAt)
	_, err = s.SourceCursorGet(ctx, "SCOPE-"+scope[len("scope-"):], cursorMemory)
	require.ErrorIs(t, err, db.ErrNotFound, "scope ids are byte-exact")

	// Lock, then compare-and-set (0, 0) -> (3, 1): succeeds once.
	advanced := db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 3, Generation: 1, UpdatedAt: now.Add(2 * time.Microsecond)}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, err := q.SourceCursorLock(ctx, scope, cursorMemory)
		require.NoError(t, err)
		require.Equal(t, c, locked)
		n, err := q.SourceCursorAdvance(ctx, advanced, locked.Position, locked.Generation)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	got, err = s.SourceCursorGet(ctx, scope, cursorMemory)
	require.NoError(t, err)
	require.Equal(t, advanced, got)

	// Stale compare-and-sets change nothing: the old pair, the right position with the old generation, and the
	// right generation with the old position.
	stale := db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 8, Generation: 2, UpdatedAt: now}
	for _, from := range [][2]int64{{0, 0}, {3, 0}, {0, 1}} {
		n, err := s.SourceCursorAdvance(ctx, stale, from[0], from[1])
		require.NoError(t, err)
		require.Zero(t, n, "from %v", from)
	}
	got, err = s.SourceCursorGet(ctx, scope, cursorMemory)
	require.NoError(t, err)
	require.Equal(t, advanced, got)

	// A generation-only bump (position unchanged) is a valid advance too; the other cursor is untouched.
	bumped := advanced
	bumped.Generation = 2
	n, err = s.SourceCursorAdvance(ctx, bumped, 3, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.SourceCursorGet(ctx, scope, cursorMemory)
	require.NoError(t, err)
	require.Equal(t, bumped, got)
	got, err = s.SourceCursorGet(ctx, scope, cursorExperience)
	require.NoError(t, err)
	require.Equal(t, other, got)
}

// --- memory entries -----------------------------------------------------------------------------------------------

func testMemoryEntry(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	list, err := s.MemoryEntryListByRevision(ctx, scope, 1)
	require.NoError(t, err)
	require.Empty(t, list)

	entry := func(scope string, rev int64, no int32) db.MemoryEntry {
		return db.MemoryEntry{
			ScopeID: scope, Revision: rev, EntryNo: no, Content: "fact é " + randHex(t, 8),
			SourcePositions: []byte(`[1,2,3]`), CreatedAt: now.Add(time.Duration(no) * time.Microsecond),
		}
	}
	e1, e2, e3 := entry(scope, 1, 1), entry(scope, 1, 2), entry(scope, 1, 3)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		for _, e := range []db.MemoryEntry{e3, e1, e2, entry(scope, 2, 1), entry(upper, 1, 1)} {
			require.NoError(t, q.MemoryEntryInsert(ctx, e))
		}
		return nil
	}))
	require.ErrorIs(t, s.MemoryEntryInsert(ctx, entry(scope, 1, 2)), db.ErrConflict)

	list, err = s.MemoryEntryListByRevision(ctx, scope, 1)
	require.NoError(t, err)
	require.Equal(t, []db.MemoryEntry{e1, e2, e3}, list)
	for _, e := range list {
		requireUTC(t, e.CreatedAt)
	}
	list, err = s.MemoryEntryListByRevision(ctx, scope, 2)
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, err = s.MemoryEntryListByRevision(ctx, scope, 3)
	require.NoError(t, err)
	require.Empty(t, list)
	list, err = s.MemoryEntryListByRevision(ctx, upper, 1)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, upper, list[0].ScopeID)
}

func testMemoryEntrySearch(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)

	contents := []string{
		1: "Alpha likes Tea",
		2: "we are 100% sure",
		3: "we are 1000 sure",
		4: "snake_case name",
		5: "snakeXcase name",
		6: `path C:\temp\x`,
		7: "tempo rubato",
		8: "Café au lait",
	}
	for no := 1; no < len(contents); no++ {
		require.NoError(t, s.MemoryEntryInsert(ctx, db.MemoryEntry{
			ScopeID: scope, Revision: 1, EntryNo: int32(no), Content: contents[no],
			SourcePositions: []byte(`[1]`), CreatedAt: now,
		}))
	}
	// Same content in another revision and another scope: never returned.
	for _, e := range []db.MemoryEntry{
		{ScopeID: scope, Revision: 2, EntryNo: 1, Content: "Alpha likes Tea", SourcePositions: []byte(`[]`), CreatedAt: now},
		{ScopeID: "SCOPE-" + scope[len("scope-"):], Revision: 1, EntryNo: 1, Content: "Alpha likes Tea", SourcePositions: []byte(`[]`), CreatedAt: now},
	} {
		require.NoError(t, s.MemoryEntryInsert(ctx, e))
	}

	search := func(query string, limit int32) []int32 {
		t.Helper()
		es, err := s.MemoryEntrySearch(ctx, scope, 1, query, limit)
		require.NoError(t, err)
		out := make([]int32, 0, len(es))
		for _, e := range es {
			require.Equal(t, scope, e.ScopeID)
			require.EqualValues(t, 1, e.Revision)
			require.Equal(t, contents[e.EntryNo], e.Content)
			requireUTC(t, e.CreatedAt)
			out = append(out, e.EntryNo)
		}
		return out
	}

	// Case-insensitive substring (ASCII letters on every engine).
	require.Equal(t, []int32{1}, search("alpha", 10))
	require.Equal(t, []int32{1}, search("LIKES tea", 10))
	require.Equal(t, []int32{1}, search("a likes t", 10))
	require.Equal(t, []int32{8}, search("café", 10), "non-ASCII matches in its own case")
	require.Empty(t, search("coffee", 10))

	// Wildcards and the escape character are literal.
	require.Equal(t, []int32{2}, search("0%", 10), `"%" is literal (would also match "1000 sure")`)
	require.Equal(t, []int32{2}, search("100% ", 10))
	require.Equal(t, []int32{4}, search("e_c", 10), `"_" is literal (would also match "snakeXcase")`)
	require.Equal(t, []int32{6}, search(`\temp`, 10), `"\" is literal (would also match "tempo")`)
	require.Equal(t, []int32{6}, search(`C:\`, 10))
	require.Empty(t, search(`%%`, 10))
	require.Empty(t, search(`\`+"%", 10))

	// Entry order and limit.
	require.Equal(t, []int32{1, 2, 3, 4}, search("E", 4))
	require.Equal(t, []int32{1, 2, 3}, search("", 3), "an empty query matches every entry, by entry_no")
	require.Equal(t, []int32{4, 5}, search("SNAKE", 10))
	require.Equal(t, []int32{4}, search("snake", 1))
	require.Equal(t, []int32{6, 7}, search("temp", 10))
}

// --- experience candidates ----------------------------------------------------------------------------------------

func testExperienceCandidate(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	_, err := s.ExperienceCandidateGet(ctx, uuid.NewString())
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.ExperienceCandidateList(ctx, scope, "", 10)
	require.NoError(t, err)
	require.Empty(t, list)

	candidate := func(scope, status string, at time.Time) db.ExperienceCandidate {
		return db.ExperienceCandidate{
			CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(),
			Title: "title é " + randHex(t, 8), Lesson: "lesson " + randHex(t, 8), CitedPositions: []byte(`[2,5]`),
			Status: status, StateVersion: 1, CreatedAt: at, UpdatedAt: at,
		}
	}
	c1 := candidate(scope, "pending", now.Add(1*time.Microsecond))
	c2 := candidate(scope, "pending", now.Add(2*time.Microsecond))
	c3 := candidate(scope, "approved", now.Add(3*time.Microsecond))
	c4 := candidate(scope, "pending", now.Add(3*time.Microsecond)) // same created_at as c3: candidate_id breaks the tie
	cOther := candidate(upper, "pending", now.Add(4*time.Microsecond))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		for _, c := range []db.ExperienceCandidate{c2, c4, c1, c3, cOther} {
			require.NoError(t, q.ExperienceCandidateInsert(ctx, c))
		}
		return nil
	}))
	require.ErrorIs(t, s.ExperienceCandidateInsert(ctx, c1), db.ErrConflict)

	got, err := s.ExperienceCandidateGet(ctx, c1.CandidateID)
	require.NoError(t, err)
	require.Equal(t, c1, got)
	requireUTC(t, got.CreatedAt)
	requireUTC(t, got.UpdatedAt)

	// Newest first: created_at DESC, candidate_id DESC.
	newest := []db.ExperienceCandidate{c3, c4}
	if c4.CandidateID > c3.CandidateID {
		newest = []db.ExperienceCandidate{c4, c3}
	}
	listOf := func(scope, status string, limit int32) []db.ExperienceCandidate {
		t.Helper()
		cs, err := s.ExperienceCandidateList(ctx, scope, status, limit)
		require.NoError(t, err)
		return cs
	}
	require.Equal(t, append(append([]db.ExperienceCandidate{}, newest...), c2, c1), listOf(scope, "", 10))
	require.Equal(t, newest, listOf(scope, "", 2))
	require.Equal(t, []db.ExperienceCandidate{c4, c2, c1}, listOf(scope, "pending", 10))
	require.Equal(t, []db.ExperienceCandidate{c3}, listOf(scope, "approved", 10))
	require.Empty(t, listOf(scope, "rejected", 10))
	require.Equal(t, []db.ExperienceCandidate{cOther}, listOf(upper, "", 10), "scope ids are byte-exact")

	// Compare-and-set on a pending candidate: succeeds once, bumps the version, keeps created_at.
	at := now.Add(time.Second + 7*time.Microsecond)
	n, err := s.ExperienceCandidateUpdateStatus(ctx, c1.CandidateID, 1, "approved", at)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	want := c1
	want.Status, want.StateVersion, want.UpdatedAt = "approved", 2, at
	got, err = s.ExperienceCandidateGet(ctx, c1.CandidateID)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// No longer pending (even with the current version): 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, c1.CandidateID, 2, "rejected", at)
	require.NoError(t, err)
	require.Zero(t, n)
	// Approved at insert: 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, c3.CandidateID, 1, "rejected", at)
	require.NoError(t, err)
	require.Zero(t, n)
	// Stale version on a pending candidate: 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, c2.CandidateID, 2, "rejected", at)
	require.NoError(t, err)
	require.Zero(t, n)
	// Missing candidate: 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, uuid.NewString(), 1, "rejected", at)
	require.NoError(t, err)
	require.Zero(t, n)
	got, err = s.ExperienceCandidateGet(ctx, c2.CandidateID)
	require.NoError(t, err)
	require.Equal(t, c2, got)

	// Inside a transaction, and the status filter follows the change.
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		n, err := q.ExperienceCandidateUpdateStatus(ctx, c2.CandidateID, 1, "rejected", at)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	require.Equal(t, []db.ExperienceCandidate{c4}, listOf(scope, "pending", 10))
	rejected := listOf(scope, "rejected", 10)
	require.Len(t, rejected, 1)
	require.Equal(t, c2.CandidateID, rejected[0].CandidateID)
	require.EqualValues(t, 2, rejected[0].StateVersion)
}
