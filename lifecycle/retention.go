package lifecycle

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// retentionBatch bounds every retention statement, like the ledger's own purges.
const retentionBatch = 500

// Retention is the data retention maintenance runs (docs/protocol.md#retention). Zero values keep everything.
type Retention struct {
	Store db.Store
	// SourceContentAfter erases the content of Sources older than this once every cursor of their scope has
	// consumed them (0 = keep Sources' content).
	SourceContentAfter time.Duration
	// MemoryRevisions keeps the newest this many Memory revisions of every scope and deletes older ones with their
	// entries (0 = keep all).
	MemoryRevisions int
}

// Tasks returns the maintenance tasks of the configured retention.
func (r Retention) Tasks() []coordinator.MaintenanceTask {
	var tasks []coordinator.MaintenanceTask
	if r.SourceContentAfter > 0 {
		tasks = append(tasks, coordinator.MaintenanceTask{Name: "erased_source_contents", Run: r.eraseSourceContents})
	}
	if r.MemoryRevisions > 0 {
		tasks = append(tasks, coordinator.MaintenanceTask{Name: "deleted_memory_revisions", Run: r.deleteOldRevisions})
	}
	return tasks
}

// deleteOldRevisions deletes, batch by batch, the revisions older than the newest MemoryRevisions of their scope:
// first a revision's entry vectors and entries (at most 500 per statement), then its row, so an interrupted run leaves a revision
// that the next run finds again. Old revisions are never written again, so no lock is needed; the latest one is
// always kept.
func (r Retention) deleteOldRevisions(ctx context.Context, _ time.Time) (int64, error) {
	var total int64
	for {
		batch, err := r.Store.MemoryRevisionListExpired(ctx, db.MemoryRevisionListExpiredParams{Keep: int64(r.MemoryRevisions), Limit: retentionBatch})
		if err != nil {
			return total, err
		}
		for _, rev := range batch {
			for { // the vectors first (normally none: only the latest revision keeps them)
				n, err := r.Store.MemoryEmbeddingDeleteRevisionBatch(ctx, db.MemoryEntryDeleteRevisionBatchParams{ScopeID: rev.ScopeID, Revision: rev.Revision, Limit: retentionBatch})
				if err != nil {
					return total, err
				}
				if n < retentionBatch {
					break
				}
			}
			for {
				n, err := r.Store.MemoryEntryDeleteRevisionBatch(ctx, db.MemoryEntryDeleteRevisionBatchParams{ScopeID: rev.ScopeID, Revision: rev.Revision, Limit: retentionBatch})
				if err != nil {
					return total, err
				}
				if n < retentionBatch {
					break
				}
			}
			n, err := r.Store.MemoryRevisionDelete(ctx, db.MemoryRevisionDeleteParams(rev))
			if err != nil {
				return total, err
			}
			total += n
		}
		if len(batch) < retentionBatch {
			return total, nil
		}
	}
}

// eraseSourceContents erases, batch by batch, the content of consumed Sources created before now −
// SourceContentAfter. The rows stay as tombstones, so journal positions and windows stay dense; Memory and
// Experience already hold what was extracted from them.
func (r Retention) eraseSourceContents(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for {
		batch, err := r.Store.SourceListErasable(ctx, db.SourceListErasableParams{CreatedBefore: now.Add(-r.SourceContentAfter), Limit: retentionBatch})
		if err != nil {
			return total, err
		}
		byScope := map[string][]int64{}
		var order []string
		for _, p := range batch {
			if _, ok := byScope[p.ScopeID]; !ok {
				order = append(order, p.ScopeID)
			}
			byScope[p.ScopeID] = append(byScope[p.ScopeID], p.JournalPosition)
		}
		for _, scope := range order {
			n, err := r.Store.SourceEraseByPositions(ctx, db.SourceEraseByPositionsParams{ScopeID: scope, Positions: byScope[scope]})
			if err != nil {
				return total, err
			}
			total += n
		}
		if len(batch) < retentionBatch {
			return total, nil
		}
	}
}
