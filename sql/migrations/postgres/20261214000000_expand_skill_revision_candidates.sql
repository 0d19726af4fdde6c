-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied (it neither
-- reads nor writes the new table; a revision it stores meanwhile has no rows here, so its candidates read as
-- unpackaged and the discoverer joins their packaging items until the skill's next revision).
-- pc_skill_revision_candidates: the Experience candidates each skill revision was built from, one row per candidate
-- (the relation form of pc_skill_revisions.source_candidate_ids), written with the revision. The packaging
-- discoverer finds approved candidates that no current revision holds through (scope_id, candidate_id) instead of
-- searching every current revision's JSON (docs/skills.md#tables-and-erasing). Backfilled from the JSON arrays of
-- the existing revisions; a scope erase deletes the rows with the revisions.
CREATE TABLE pc_skill_revision_candidates (
    scope_id     text        COLLATE "C" NOT NULL,
    skill_name   varchar(64) COLLATE "C" NOT NULL,
    revision     bigint      NOT NULL,
    candidate_id uuid        NOT NULL,
    CONSTRAINT pc_skill_revision_candidates_pkey PRIMARY KEY (scope_id, skill_name, revision, candidate_id)
);
CREATE INDEX pc_skill_revision_candidates_scope_candidate_idx ON pc_skill_revision_candidates (scope_id, candidate_id);
INSERT INTO pc_skill_revision_candidates (scope_id, skill_name, revision, candidate_id)
SELECT DISTINCT r.scope_id, r.skill_name, r.revision, e.candidate_id::uuid
FROM pc_skill_revisions r
CROSS JOIN LATERAL jsonb_array_elements_text(convert_from(r.source_candidate_ids, 'UTF8')::jsonb) AS e(candidate_id);
