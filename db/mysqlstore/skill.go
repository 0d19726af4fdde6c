package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SkillRevisionInsert stores the revision, then all of its pc_skill_revision_candidates rows (one per distinct
// candidate id of its source_candidate_ids) in one INSERT … SELECT per 1,000 ids (MySQL has no data-modifying CTE to
// do both in one statement, as PostgreSQL does). The caller's transaction (the package item's commit) makes them one
// write; a revision is written once per packaging, so the two are not sent as one multi-statement. OceanBase (and
// the per-row chains of the tests) writes the candidate rows one statement each.
func (q queries) SkillRevisionInsert(ctx context.Context, r db.SkillRevision) error {
	ids, err := conv.SkillRevisionCandidateIDs(r.SourceCandidateIDs)
	if err != nil {
		return err
	}
	rev := conv.SkillRevisionToGen[mysqlgen.SkillRevisionInsertParams](r)
	if q.flavor.chains() {
		if err := errs.Err(q.q.SkillRevisionInsert(ctx, rev)); err != nil {
			return err
		}
		for _, id := range ids {
			if err := errs.Err(q.q.SkillRevisionCandidateInsert(ctx, mysqlgen.SkillRevisionCandidateInsertParams{ScopeID: r.ScopeID,
				SkillName: r.SkillName, Revision: r.Revision, CandidateID: id})); err != nil {
				return err
			}
		}
		return nil
	}
	sets, err := conv.SkillRevisionCandidateSets(ids, setRows)
	if err != nil {
		return err
	}
	if err := errs.Err(q.q.SkillRevisionInsert(ctx, rev)); err != nil {
		return err
	}
	for _, set := range sets {
		n, err := q.q.SkillRevisionCandidateInsertMany(ctx, mysqlgen.SkillRevisionCandidateInsertManyParams{CandidateIds: set.JSON,
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
