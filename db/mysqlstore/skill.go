package mysqlstore

import (
	"context"
	"fmt"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SkillRevisionInsert stores the revision, then all of its pc_skill_revision_candidates rows (one per distinct
// candidate id of its source_candidate_ids) in one INSERT … SELECT per 1,000 ids (MySQL has no data-modifying CTE to
// do both in one statement, as PostgreSQL does); inside a transaction whose pool sends multi-statements (MariaDB,
// MySQL 8) both go in one round trip (execMulti). The caller's transaction (the package item's commit) makes them
// one write. OceanBase (and the per-row chains of the tests) writes the candidate rows one statement each.
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
	params := func(set conv.CandidateSet) mysqlgen.SkillRevisionCandidateInsertManyParams {
		return mysqlgen.SkillRevisionCandidateInsertManyParams{CandidateIds: set.JSON, ScopeID: r.ScopeID, SkillName: r.SkillName,
			Revision: r.Revision}
	}
	if q.atCommit != nil && len(sets) > 0 {
		d := &deferredWrites{}
		g := mysqlgen.New(recorder{d})
		if err := g.SkillRevisionInsert(ctx, rev); err != nil {
			return err
		}
		for _, set := range sets {
			if _, err := g.SkillRevisionCandidateInsertMany(ctx, params(set)); err != nil {
				return err
			}
		}
		counts, err := execMulti(ctx, q.tx, d)
		if err != nil {
			return err
		}
		if len(counts) != 1+len(sets) {
			return fmt.Errorf("mysqlstore: revision insert reported %d results for %d statements", len(counts), 1+len(sets))
		}
		for i, set := range sets {
			if err := set.Wrote(counts[1+i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := errs.Err(q.q.SkillRevisionInsert(ctx, rev)); err != nil {
		return err
	}
	for _, set := range sets {
		n, err := q.q.SkillRevisionCandidateInsertMany(ctx, params(set))
		if err != nil {
			return errs(err)
		}
		if err := set.Wrote(n); err != nil {
			return err
		}
	}
	return nil
}
