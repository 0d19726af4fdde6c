package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// sourceCursorCases are the cases of pc_source_cursors (source_cursor.sql).
var sourceCursorCases = []storeCase{
	{"SourceCursorAdvance/CompareAndSet", testSourceCursor},
}

// Cursor names of the domain (docs/protocol.md#windows-and-cursors).
const (
	cursorMemory     = "memory-source-window"
	cursorExperience = "experience-incubation"
)

func testSourceCursor(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)

	_, err := s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: cursorMemory})
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.SourceCursorLock(ctx, db.SourceCursorLockParams{ScopeID: scope, CursorName: cursorMemory})
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	n, err := s.SourceCursorAdvance(ctx, db.SourceCursorAdvanceParams{Cursor: db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 1, Generation: 1, UpdatedAt: now}, FromPosition: 0, FromGeneration: 0})
	require.NoError(t, err)
	require.Zero(t, n, "advancing a missing cursor changes nothing")

	c := db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 0, Generation: 0, UpdatedAt: now.Add(time.Microsecond)}
	require.NoError(t, s.SourceCursorInsert(ctx, c))
	require.ErrorIs(t, s.SourceCursorInsert(ctx, c), db.ErrConflict)
	other := db.SourceCursor{ScopeID: scope, CursorName: cursorExperience, Position: 4, Generation: 9, UpdatedAt: now}
	require.NoError(t, s.SourceCursorInsert(ctx, other))
	got, err := s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: cursorMemory})
	require.NoError(t, err)
	require.Equal(t, c, got)
	requireUTC(t, got.UpdatedAt)
	_, err = s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: "SCOPE-" + scope[len("scope-"):], CursorName: cursorMemory})
	require.ErrorIs(t, err, db.ErrNotFound, "scope ids are byte-exact")

	// Lock, then compare-and-set (0, 0) -> (3, 1): succeeds once.
	advanced := db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 3, Generation: 1, UpdatedAt: now.Add(2 * time.Microsecond)}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, err := q.SourceCursorLock(ctx, db.SourceCursorLockParams{ScopeID: scope, CursorName: cursorMemory})
		require.NoError(t, err)
		require.Equal(t, c, locked)
		n, err := q.SourceCursorAdvance(ctx, db.SourceCursorAdvanceParams{Cursor: advanced, FromPosition: locked.Position, FromGeneration: locked.Generation})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	got, err = s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: cursorMemory})
	require.NoError(t, err)
	require.Equal(t, advanced, got)

	// Stale compare-and-sets change nothing: the old pair, the right position with the old generation, and the
	// right generation with the old position.
	stale := db.SourceCursor{ScopeID: scope, CursorName: cursorMemory, Position: 8, Generation: 2, UpdatedAt: now}
	for _, from := range [][2]int64{{0, 0}, {3, 0}, {0, 1}} {
		n, err := s.SourceCursorAdvance(ctx, db.SourceCursorAdvanceParams{Cursor: stale, FromPosition: from[0], FromGeneration: from[1]})
		require.NoError(t, err)
		require.Zero(t, n, "from %v", from)
	}
	got, err = s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: cursorMemory})
	require.NoError(t, err)
	require.Equal(t, advanced, got)

	// A generation-only bump (position unchanged) is a valid advance too; the other cursor is untouched.
	bumped := advanced
	bumped.Generation = 2
	n, err = s.SourceCursorAdvance(ctx, db.SourceCursorAdvanceParams{Cursor: bumped, FromPosition: 3, FromGeneration: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: cursorMemory})
	require.NoError(t, err)
	require.Equal(t, bumped, got)
	got, err = s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: cursorExperience})
	require.NoError(t, err)
	require.Equal(t, other, got)
}
