package mysqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// AsMySQL8 makes s run the statements it runs on MySQL 8: none of the MariaDB-only folds.
func AsMySQL8(s *Store) *Store {
	s.flavor.mariaDB = false
	return s
}

// TxDB is the pool of InTx's transactions.
func TxDB(s *Store) *sql.DB { return s.txDB }

// AsPerRowChains makes s run the set-based ledger methods as their per-row chains, as it does on OceanBase.
func AsPerRowChains(s *Store) *Store {
	s.flavor.perRow = true
	return s
}

// DeferAssertedLaneUpdate queues, inside InTx, a lane update and DBAssertRowCount(want) for the COMMIT, as claimWrites
// queues a claim pass's writes.
func DeferAssertedLaneUpdate(ctx context.Context, q db.Queries, lane db.WorkLane, want int64) error {
	d := q.(queries).atCommit
	if d == nil {
		return errors.New("no multi-statement COMMIT on this pool")
	}
	g := mysqlgen.New(recorder{d})
	if _, err := g.WorkLaneUpdate(ctx, conv.WorkLaneUpdateToGen[mysqlgen.WorkLaneUpdateParams](lane)); err != nil {
		return err
	}
	return g.DBAssertRowCount(ctx, want)
}

// ClaimCandidatesByDue runs WorkItemClaimCandidatesByDue, its queued branch reading at most scan items.
func ClaimCandidatesByDue(ctx context.Context, s *Store, p db.WorkItemClaimCandidatesParams, scan int32) ([]db.ClaimCandidate, error) {
	return s.claimCandidatesByDue(ctx, p, scan)
}

// CandidatesByDue reports whether s's next candidate query reads the due index first.
func CandidatesByDue(s *Store) bool { return s.byDue.full.Load() && s.byDue.skip.Load() == 0 }

// CandidatesByDueSkip is how many passes s skips WorkItemClaimCandidatesByDue before it asks it again.
func CandidatesByDueSkip(s *Store) int32 { return s.byDue.skip.Load() }

// DueScanBound is how many due queued items the adapter's WorkItemClaimCandidatesByDue reads for a limit.
func DueScanBound(limit int32) int32 { return dueScanBound(limit) }
