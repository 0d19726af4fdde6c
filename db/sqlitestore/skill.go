package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SkillRevisionInsert stores the revision, then all of its pc_skill_revision_candidates rows (one per distinct
// candidate id of its source_candidate_ids) in one INSERT … SELECT over a JSON array (SQLite has no data-modifying
// CTE to do both in one statement, as PostgreSQL does): two statements for any number of candidates, one without
// any. The caller's transaction (the package item's commit) makes them one write.
func (q *queries) SkillRevisionInsert(ctx context.Context, r db.SkillRevision) error {
	ids, err := conv.SkillRevisionCandidateIDs(r.SourceCandidateIDs)
	if err != nil {
		return err
	}
	sets, err := conv.SkillRevisionCandidateSets(ids, 0)
	if err != nil {
		return err
	}
	if err := errs.Err(q.w.SkillRevisionInsert(ctx, conv.SkillRevisionToGen[sqlitegen.SkillRevisionInsertParams](r))); err != nil {
		return err
	}
	for _, set := range sets {
		n, err := q.w.SkillRevisionCandidateInsertMany(ctx, sqlitegen.SkillRevisionCandidateInsertManyParams{CandidateIds: set.JSON,
			ScopeID: r.ScopeID, SkillName: r.SkillName, Revision: r.Revision})
		if err != nil {
			return errs(err)
		}
		if err := set.Wrote(n); err != nil {
			return err
		}
	}
	return nil
}
