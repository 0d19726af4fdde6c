package enginetest

import (
	"context"

	"github.com/powercontext/powercontext/db"
)

// FailEnqueueWrites returns s with every transaction failing with err where an enqueue writes its key, lane and item
// (WorkKeyItemInsert, WorkKeyItemInsertAtCommit): after the enqueue's spec ran, as a crash before the commit would.
// Tests use it to show that what a spec writes commits with the window or not at all.
func FailEnqueueWrites(s db.Store, err error) db.Store { return failEnqueueWrites{Store: s, err: err} }

type failEnqueueWrites struct {
	db.Store
	err error
}

type failEnqueueWritesTx struct {
	db.Queries
	err error
}

func (f failEnqueueWrites) InTx(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) error {
	return f.Store.InTx(ctx, func(ctx context.Context, q db.Queries) error { return fn(ctx, failEnqueueWritesTx{q, f.err}) })
}

func (f failEnqueueWritesTx) WorkKeyItemInsert(context.Context, db.WorkKeyItemInsertParams) (bool, error) {
	return false, f.err
}

func (f failEnqueueWritesTx) WorkKeyItemInsertAtCommit(context.Context, db.WorkKeyItemInsertParams, *bool) error {
	return f.err
}
