package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
)

// This engine has no set statements: the set-based methods run their per-row statements (db.Chain…). A claim pass
// on the Store runs in a transaction of its own, so its locks last until its claims are written.

// WorkItemClaimMany runs a claim pass with the per-row statements (db.ChainWorkItemClaimMany) in one transaction.
func (s *Store) WorkItemClaimMany(ctx context.Context, p db.WorkItemClaimManyParams) (db.WorkItemClaimManyResult, error) {
	return db.InTxWorkItemClaimMany(ctx, s.InTx, p)
}
