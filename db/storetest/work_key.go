package storetest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// workKeyCases are the cases of pc_work_keys (work_key.sql).
var workKeyCases = []storeCase{
	{"WorkKeyInsertIfAbsent/UniqueKeysLockDelete", testWorkKey},
}

func testWorkKey(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	key := db.WorkKey{LogicalKey: randHex(t, 64), WorkID: uuid.NewString(), LaneKey: randHex(t, 64), CreatedAt: now}

	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkKeyLock(ctx, key.LogicalKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))

	inserted, err := s.WorkKeyInsertIfAbsent(ctx, key)
	require.NoError(t, err)
	require.True(t, inserted)

	// Same logical key, another item: not inserted, the first row stays.
	other := key
	other.WorkID = uuid.NewString()
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, other)
	require.NoError(t, err)
	require.False(t, inserted)

	// Another logical key for the same work id violates the work_id unique key: not inserted either.
	sameWork := key
	sameWork.LogicalKey = randHex(t, 64)
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, sameWork)
	require.NoError(t, err)
	require.False(t, inserted)

	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		got, err := q.WorkKeyLock(ctx, key.LogicalKey)
		require.NoError(t, err)
		require.Equal(t, key, got)
		requireUTC(t, got.CreatedAt)
		return nil
	}))

	n, err := s.WorkKeyDelete(ctx, key.LogicalKey)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.WorkKeyDelete(ctx, key.LogicalKey)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkKeyLock(ctx, key.LogicalKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))

	// After the delete the work id is free again (the key is re-creatable).
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, sameWork)
	require.NoError(t, err)
	require.True(t, inserted)
}
