package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SkillRevisionInsert stores the revision, then one pc_skill_revision_candidates row per distinct candidate id of its
// source_candidate_ids (SQLite has no data-modifying CTE to do both in one statement, as PostgreSQL does); the
// caller's transaction (the package item's commit) makes them one write.
func (q *queries) SkillRevisionInsert(ctx context.Context, r db.SkillRevision) error {
	ids, err := conv.SkillRevisionCandidateIDs(r.SourceCandidateIDs)
	if err != nil {
		return err
	}
	if err := errs.Err(q.w.SkillRevisionInsert(ctx, conv.SkillRevisionToGen[sqlitegen.SkillRevisionInsertParams](r))); err != nil {
		return err
	}
	for _, id := range ids {
		if err := errs.Err(q.w.SkillRevisionCandidateInsert(ctx, sqlitegen.SkillRevisionCandidateInsertParams{ScopeID: r.ScopeID,
			SkillName: r.SkillName, Revision: r.Revision, CandidateID: id})); err != nil {
			return err
		}
	}
	return nil
}
