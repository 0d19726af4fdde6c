-- Statements of Skills (docs/skills.md): pc_skills, pc_skill_revisions, pc_skill_targets, pc_skill_publications.

-- Guard: caller verified the erase's claim under its item lock; at most limit rows of one scope. Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: SkillDeleteBatch :execrows
DELETE FROM pc_skills
WHERE rowid IN (
    SELECT t.rowid FROM pc_skills t
    WHERE t.scope_id = sqlc.arg('scope_id')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- No lock; one primary-key read of a scope's skill.
-- name: SkillGet :one
SELECT scope_id, skill_name, current_revision, created_at, updated_at
FROM pc_skills
WHERE scope_id = sqlc.arg('scope_id') AND skill_name = sqlc.arg('skill_name');

-- Guard: primary key (scope, name); a second first revision is db.ErrConflict. Runs in the package item's commit.
-- name: SkillInsert :exec
INSERT INTO pc_skills (scope_id, skill_name, current_revision, created_at, updated_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('skill_name'), sqlc.arg('current_revision'), sqlc.arg('created_at'), sqlc.arg('updated_at'));

-- No lock; a scope's skills by name, at most limit.
-- name: SkillList :many
SELECT scope_id, skill_name, current_revision, created_at, updated_at
FROM pc_skills
WHERE scope_id = sqlc.arg('scope_id')
ORDER BY skill_name
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; the number of publications in each state (the leader's skill-publication gauge; counts only, no skill content).
-- name: SkillPublicationCountByState :many
SELECT state, COUNT(*) AS publication_count
FROM pc_skill_publications
GROUP BY state
ORDER BY state;

-- Guard: caller verified the erase's claim under its item lock; at most limit rows of one scope. Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: SkillPublicationDeleteBatch :execrows
DELETE FROM pc_skill_publications
WHERE rowid IN (
    SELECT t.rowid FROM pc_skill_publications t
    WHERE t.scope_id = sqlc.arg('scope_id')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- No lock; one primary-key read of a publication (its generation guards the next write).
-- name: SkillPublicationGet :one
SELECT target_id, skill_name, scope_id, desired_state, desired_revision, observed_revision, observed_tree_digest, error_code, state, generation, created_at, updated_at
FROM pc_skill_publications
WHERE target_id = sqlc.arg('target_id') AND skill_name = sqlc.arg('skill_name');

-- Guard: primary key (target, skill); a concurrent first publication is db.ErrConflict.
-- name: SkillPublicationInsert :exec
INSERT INTO pc_skill_publications (target_id, skill_name, scope_id, desired_state, desired_revision, observed_revision, observed_tree_digest, error_code, state, generation, created_at, updated_at)
VALUES (sqlc.arg('target_id'), sqlc.arg('skill_name'), sqlc.arg('scope_id'), sqlc.arg('desired_state'), sqlc.arg('desired_revision'), sqlc.arg('observed_revision'), sqlc.arg('observed_tree_digest'), sqlc.arg('error_code'), sqlc.arg('state'), sqlc.arg('generation'), sqlc.arg('created_at'), sqlc.arg('updated_at'));

-- No lock; a skill's publications (a new revision moves those that followed the old one).
-- name: SkillPublicationListBySkill :many
SELECT target_id, skill_name, scope_id, desired_state, desired_revision, observed_revision, observed_tree_digest, error_code, state, generation, created_at, updated_at
FROM pc_skill_publications
WHERE scope_id = sqlc.arg('scope_id') AND skill_name = sqlc.arg('skill_name')
ORDER BY target_id;

-- No lock; a target's publications by skill name (the agent's desired state).
-- name: SkillPublicationListByTarget :many
SELECT target_id, skill_name, scope_id, desired_state, desired_revision, observed_revision, observed_tree_digest, error_code, state, generation, created_at, updated_at
FROM pc_skill_publications
WHERE target_id = sqlc.arg('target_id')
ORDER BY skill_name;

-- Guard: generation equals the expected generation (compare-and-set); the generation becomes expected + 1.
-- name: SkillPublicationUpdateDesired :execrows
UPDATE pc_skill_publications
SET desired_state = sqlc.arg('desired_state'),
    desired_revision = sqlc.arg('desired_revision'),
    state = sqlc.arg('state'),
    generation = generation + 1,
    updated_at = sqlc.arg('updated_at')
WHERE target_id = sqlc.arg('target_id')
  AND skill_name = sqlc.arg('skill_name')
  AND generation = sqlc.arg('expected_generation');

-- Guard: generation equals the expected generation (compare-and-set); the generation becomes expected + 1.
-- name: SkillPublicationUpdateObserved :execrows
UPDATE pc_skill_publications
SET observed_revision = sqlc.narg('observed_revision'),
    observed_tree_digest = sqlc.narg('observed_tree_digest'),
    error_code = sqlc.narg('error_code'),
    state = sqlc.arg('state'),
    generation = generation + 1,
    updated_at = sqlc.arg('updated_at')
WHERE target_id = sqlc.arg('target_id')
  AND skill_name = sqlc.arg('skill_name')
  AND generation = sqlc.arg('expected_generation');

-- Guard: caller verified the erase's claim under its item lock; at most limit rows of one scope (deleted before the revisions). Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: SkillRevisionCandidateDeleteBatch :execrows
DELETE FROM pc_skill_revision_candidates
WHERE rowid IN (
    SELECT t.rowid FROM pc_skill_revision_candidates t
    WHERE t.scope_id = sqlc.arg('scope_id')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- Engine-only (mysql, sqlite): Requires the transaction of SkillRevisionInsert (the package item's commit); guard: primary key; the candidate rows of the revision just inserted (read by its primary key) in one statement over the distinct candidate ids read from a JSON array parameter (json_each; the adapter dedups), because SQLite has no data-modifying CTE to write them in the revision's statement.
-- name: SkillRevisionCandidateInsertMany :execrows
INSERT INTO pc_skill_revision_candidates (scope_id, skill_name, revision, candidate_id)
SELECT r.scope_id, r.skill_name, r.revision, e.value
FROM pc_skill_revisions AS r, json_each(CAST(sqlc.arg('candidate_ids') AS TEXT)) AS e
WHERE r.scope_id = sqlc.arg('scope_id') AND r.skill_name = sqlc.arg('skill_name') AND r.revision = sqlc.arg('revision');

-- Guard: caller verified the erase's claim under its item lock; at most limit rows of one scope. Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: SkillRevisionDeleteBatch :execrows
DELETE FROM pc_skill_revisions
WHERE rowid IN (
    SELECT t.rowid FROM pc_skill_revisions t
    WHERE t.scope_id = sqlc.arg('scope_id')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- No lock; one primary-key read of a revision with its archive.
-- name: SkillRevisionGet :one
SELECT scope_id, skill_name, revision, tree_digest, archive_digest, file_count, byte_size, archive, source_candidate_ids, created_at
FROM pc_skill_revisions
WHERE scope_id = sqlc.arg('scope_id') AND skill_name = sqlc.arg('skill_name') AND revision = sqlc.arg('revision');

-- Guard: primary key (scope, name, revision); the package lane serialises a scope's revisions, a duplicate is db.ErrConflict.
-- name: SkillRevisionInsert :exec
INSERT INTO pc_skill_revisions (scope_id, skill_name, revision, tree_digest, archive_digest, file_count, byte_size, archive, source_candidate_ids, created_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('skill_name'), sqlc.arg('revision'), sqlc.arg('tree_digest'), sqlc.arg('archive_digest'), sqlc.arg('file_count'), sqlc.arg('byte_size'), sqlc.arg('archive'), sqlc.arg('source_candidate_ids'), sqlc.arg('created_at'));

-- No lock; a skill's revisions, newest first, at most limit (archives included).
-- name: SkillRevisionList :many
SELECT scope_id, skill_name, revision, tree_digest, archive_digest, file_count, byte_size, archive, source_candidate_ids, created_at
FROM pc_skill_revisions
WHERE scope_id = sqlc.arg('scope_id') AND skill_name = sqlc.arg('skill_name')
ORDER BY revision DESC
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; the current revision of each of a scope's skills, by skill name, at most limit, without the archives (a listing never loads packages).
-- name: SkillRevisionListCurrent :many
SELECT s.scope_id, s.skill_name, s.current_revision, s.created_at, s.updated_at, r.tree_digest, r.archive_digest, r.file_count, r.byte_size, r.source_candidate_ids, r.created_at AS revision_created_at
FROM pc_skills s
JOIN pc_skill_revisions r ON r.scope_id = s.scope_id AND r.skill_name = s.skill_name AND r.revision = s.current_revision
WHERE s.scope_id = sqlc.arg('scope_id')
ORDER BY s.skill_name
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; a skill's revisions, newest first, at most limit, without the archives (a listing never loads packages).
-- name: SkillRevisionListSummary :many
SELECT scope_id, skill_name, revision, tree_digest, archive_digest, file_count, byte_size, source_candidate_ids, created_at
FROM pc_skill_revisions
WHERE scope_id = sqlc.arg('scope_id') AND skill_name = sqlc.arg('skill_name')
ORDER BY revision DESC
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Guard: caller verified the erase's claim under its item lock; at most limit rows of one scope. Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: SkillTargetDeleteBatch :execrows
DELETE FROM pc_skill_targets
WHERE rowid IN (
    SELECT t.rowid FROM pc_skill_targets t
    WHERE t.scope_id = sqlc.arg('scope_id')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- Guard: the enrollment digest matches, has not expired on the database clock and the target is not revoked; the token is spent (cleared) and the generation moves on. Differs from postgres because SQLite's clock is unix microseconds UTC with millisecond resolution.
-- name: SkillTargetEnroll :execrows
UPDATE pc_skill_targets
SET credential_digest = sqlc.arg('credential_digest'),
    enrollment_digest = NULL,
    enrollment_expires_at = NULL,
    generation = generation + 1,
    updated_at = sqlc.arg('updated_at')
WHERE enrollment_digest = sqlc.arg('enrollment_digest')
  AND enrollment_expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
  AND revoked_at IS NULL;

-- No lock; one primary-key read of a target.
-- name: SkillTargetGet :one
SELECT target_id, scope_id, agent_kind, display_name, enrollment_digest, enrollment_expires_at, credential_digest, revoked_at, generation, created_at, updated_at
FROM pc_skill_targets
WHERE target_id = sqlc.arg('target_id');

-- No lock; the target a credential digest belongs to (unique key), revoked or not.
-- name: SkillTargetGetByCredential :one
SELECT target_id, scope_id, agent_kind, display_name, enrollment_digest, enrollment_expires_at, credential_digest, revoked_at, generation, created_at, updated_at
FROM pc_skill_targets
WHERE credential_digest = sqlc.arg('credential_digest');

-- No lock; the target an enrollment digest belongs to (unique key).
-- name: SkillTargetGetByEnrollment :one
SELECT target_id, scope_id, agent_kind, display_name, enrollment_digest, enrollment_expires_at, credential_digest, revoked_at, generation, created_at, updated_at
FROM pc_skill_targets
WHERE enrollment_digest = sqlc.arg('enrollment_digest');

-- Guard: primary key (a fresh random id) and the unique enrollment digest; a duplicate is db.ErrConflict.
-- name: SkillTargetInsert :exec
INSERT INTO pc_skill_targets (target_id, scope_id, agent_kind, display_name, enrollment_digest, enrollment_expires_at, credential_digest, revoked_at, generation, created_at, updated_at)
VALUES (sqlc.arg('target_id'), sqlc.arg('scope_id'), sqlc.arg('agent_kind'), sqlc.arg('display_name'), sqlc.arg('enrollment_digest'), sqlc.arg('enrollment_expires_at'), sqlc.arg('credential_digest'), sqlc.arg('revoked_at'), sqlc.arg('generation'), sqlc.arg('created_at'), sqlc.arg('updated_at'));

-- No lock; a scope's targets, oldest first, at most limit.
-- name: SkillTargetList :many
SELECT target_id, scope_id, agent_kind, display_name, enrollment_digest, enrollment_expires_at, credential_digest, revoked_at, generation, created_at, updated_at
FROM pc_skill_targets
WHERE scope_id = sqlc.arg('scope_id')
ORDER BY created_at, target_id
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Guard: not revoked yet; the unspent enrollment goes, the generation moves on.
-- name: SkillTargetRevoke :execrows
UPDATE pc_skill_targets
SET revoked_at = sqlc.arg('revoked_at'),
    enrollment_digest = NULL,
    enrollment_expires_at = NULL,
    generation = generation + 1,
    updated_at = sqlc.arg('updated_at')
WHERE target_id = sqlc.arg('target_id')
  AND revoked_at IS NULL;

-- Guard: current_revision equals the expected revision (compare-and-set), and its row lock lasts until the commit: runs in the package item's commit, and in a publication's write (an unchanged rewrite that orders it against packaging commits).
-- name: SkillUpdateRevision :execrows
UPDATE pc_skills
SET current_revision = sqlc.arg('current_revision'),
    updated_at = sqlc.arg('updated_at')
WHERE scope_id = sqlc.arg('scope_id')
  AND skill_name = sqlc.arg('skill_name')
  AND current_revision = sqlc.arg('expected_revision');
