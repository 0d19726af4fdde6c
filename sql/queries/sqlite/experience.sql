-- No lock; autocommitted read of one candidate.
-- name: ExperienceCandidateGet :one
SELECT candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at
FROM pc_experience_candidates
WHERE candidate_id = sqlc.arg('candidate_id');

-- Unique key candidate_id; caller holds the lane lock and the domain cursor.
-- name: ExperienceCandidateInsert :exec
INSERT INTO pc_experience_candidates (
    candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at
) VALUES (
    sqlc.arg('candidate_id'), sqlc.arg('scope_id'), sqlc.arg('work_id'), sqlc.arg('title'), sqlc.arg('lesson'),
    sqlc.arg('cited_positions'), sqlc.arg('status'), sqlc.arg('state_version'), sqlc.arg('created_at'),
    sqlc.arg('updated_at')
);

-- No lock; a scope's candidates newest first (created_at DESC, candidate_id DESC); NULL status = any.
-- name: ExperienceCandidateList :many
SELECT candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at
FROM pc_experience_candidates
WHERE scope_id = sqlc.arg('scope_id')
  AND (status = sqlc.narg('status') OR sqlc.narg('status') IS NULL)
ORDER BY created_at DESC, candidate_id DESC
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; keyset page of a scope's candidates in one status, oldest first, after (after_created_at,
-- after_candidate_id) (pc_experience_candidates_scope_status_idx: scope, status, then the created_at range).
-- name: ExperienceCandidateListByStatusAfter :many
SELECT candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at
FROM pc_experience_candidates
WHERE scope_id = sqlc.arg('scope_id')
  AND status = sqlc.arg('status')
  AND created_at >= sqlc.arg('after_created_at')
  AND (created_at > sqlc.arg('after_created_at') OR candidate_id > sqlc.arg('after_candidate_id'))
ORDER BY created_at, candidate_id
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; the skill packaging discoverer's keyset over scopes after after_scope_id: approved candidates that no
-- current revision of their scope's skills holds (pc_skill_revision_candidates by (scope_id, candidate_id), then the skill's key).
-- name: ExperienceCandidateListUnpackaged :many
SELECT c.candidate_id, c.scope_id, c.work_id, c.title, c.lesson, c.cited_positions, c.status, c.state_version,
       c.created_at, c.updated_at
FROM pc_experience_candidates c
WHERE c.scope_id > sqlc.arg('after_scope_id')
  AND c.status = 'approved'
  AND NOT EXISTS (
      SELECT 1
      FROM pc_skill_revision_candidates rc
      JOIN pc_skills s ON s.scope_id = rc.scope_id AND s.skill_name = rc.skill_name AND s.current_revision = rc.revision
      WHERE rc.scope_id = c.scope_id
        AND rc.candidate_id = c.candidate_id)
ORDER BY c.scope_id, c.candidate_id
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Guard: status = 'pending' and state_version equals the expected version (compare-and-set); the version becomes expected + 1.
-- name: ExperienceCandidateUpdateStatus :execrows
UPDATE pc_experience_candidates
SET status = sqlc.arg('status'),
    state_version = state_version + 1,
    updated_at = sqlc.arg('updated_at')
WHERE candidate_id = sqlc.arg('candidate_id')
  AND status = 'pending'
  AND state_version = sqlc.arg('expected_version');
