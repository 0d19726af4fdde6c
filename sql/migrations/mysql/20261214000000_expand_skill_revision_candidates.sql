-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied (it neither
-- reads nor writes the new table; a revision it stores meanwhile has no rows here, so its candidates read as
-- unpackaged and the discoverer joins their packaging items until the skill's next revision).
-- pc_skill_revision_candidates: the Experience candidates each skill revision was built from, one row per candidate
-- (the relation form of pc_skill_revisions.source_candidate_ids), written with the revision. The packaging
-- discoverer finds approved candidates that no current revision holds through (scope_id, candidate_id) instead of
-- searching every current revision's JSON (docs/skills.md#tables-and-erasing). Backfilled from the JSON arrays of
-- the existing revisions (JSON_TABLE: MariaDB 10.6+, MySQL 8); a scope erase deletes the rows with the revisions.
CREATE TABLE pc_skill_revision_candidates (
    scope_id     VARBINARY(256) NOT NULL,
    skill_name   VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    revision     BIGINT         NOT NULL,
    candidate_id CHAR(36)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    PRIMARY KEY (scope_id, skill_name, revision, candidate_id),
    KEY pc_skill_revision_candidates_scope_candidate_idx (scope_id, candidate_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO pc_skill_revision_candidates (scope_id, skill_name, revision, candidate_id)
SELECT DISTINCT r.scope_id, r.skill_name, r.revision, j.candidate_id
FROM pc_skill_revisions r,
     JSON_TABLE(CONVERT(r.source_candidate_ids USING utf8mb4), '$[*]' COLUMNS (candidate_id VARCHAR(36) PATH '$')) AS j;
