-- Statements of the data lifecycle (docs/protocol.md#forgetting-and-erasing, docs/protocol.md#retention).

-- Guard: caller verified the erase's claim under its item lock; at most limit rows of one scope.
-- name: ExperienceCandidateDeleteBatch :execrows
DELETE FROM pc_experience_candidates
WHERE scope_id = sqlc.arg('scope_id')
LIMIT ?;

-- No lock; keyset page of a scope's candidates by candidate_id through pc_experience_candidates_scope_candidate_idx
-- (a forgotten Source's citing candidates are picked in Go: cited_positions is a JSON array).
-- name: ExperienceCandidateListByScopeAfter :many
SELECT candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at
FROM pc_experience_candidates
WHERE scope_id = sqlc.arg('scope_id')
  AND candidate_id > sqlc.arg('after_candidate_id')
ORDER BY candidate_id
LIMIT ?;

-- Guard: not withdrawn yet; the version moves on so a reviewer's stale expected_version conflicts. The text goes:
-- it was derived from the forgotten Source.
-- name: ExperienceCandidateWithdraw :execrows
UPDATE pc_experience_candidates
SET status = 'withdrawn',
    title = '',
    lesson = '',
    state_version = state_version + 1,
    updated_at = sqlc.arg('updated_at')
WHERE candidate_id = sqlc.arg('candidate_id')
  AND status <> 'withdrawn';

-- Guard: caller verified the redaction's claim under its item lock; one entry.
-- name: MemoryEntryDelete :execrows
DELETE FROM pc_memory_entries
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
  AND entry_no = sqlc.arg('entry_no');

-- Guard: caller verified the erase's claim under its item lock; at most limit entries of one scope.
-- name: MemoryEntryDeleteBatch :execrows
DELETE FROM pc_memory_entries
WHERE scope_id = sqlc.arg('scope_id')
LIMIT ?;

-- No lock (an old revision is never written again); at most limit entries of one revision.
-- name: MemoryEntryDeleteRevisionBatch :execrows
DELETE FROM pc_memory_entries
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
LIMIT ?;

-- No lock (history is only rewritten by a redaction, in its scope's memory lane); keyset page of a scope's
-- entries by (revision, entry_no), for scrubbing a forgotten Source from every revision.
-- name: MemoryEntryListByScopeAfter :many
SELECT scope_id, revision, entry_no, content, source_positions, created_at, entry_id
FROM pc_memory_entries
WHERE scope_id = sqlc.arg('scope_id')
  AND (revision > sqlc.arg('after_revision') OR (revision = sqlc.arg('after_revision') AND entry_no > sqlc.arg('after_entry_no')))
ORDER BY revision, entry_no
LIMIT ?;

-- Guard: caller verified the redaction's claim under its item lock; one entry.
-- name: MemoryEntryUpdatePositions :execrows
UPDATE pc_memory_entries
SET source_positions = sqlc.arg('source_positions')
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
  AND entry_no = sqlc.arg('entry_no');

-- No lock (an old revision is never written again); one revision row.
-- name: MemoryRevisionDelete :execrows
DELETE FROM pc_memory_revisions
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision');

-- Guard: caller verified the erase's claim under its item lock; at most limit revisions of one scope.
-- name: MemoryRevisionDeleteBatch :execrows
DELETE FROM pc_memory_revisions
WHERE scope_id = sqlc.arg('scope_id')
LIMIT ?;

-- No lock; retention candidates: revisions older than the newest keep of their scope, by scope and revision.
-- name: MemoryRevisionListExpired :many
SELECT r.scope_id, r.revision
FROM pc_memory_revisions r
WHERE r.revision <= (SELECT MAX(m.revision) FROM pc_memory_revisions m WHERE m.scope_id = r.scope_id) - sqlc.arg('keep')
ORDER BY r.scope_id, r.revision
LIMIT ?;

-- Guard: caller verified the redaction's claim under its item lock; the count follows the entries it deleted.
-- name: MemoryRevisionSubtractEntries :execrows
UPDATE pc_memory_revisions
SET entry_count = entry_count - sqlc.arg('removed')
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision');

-- Guard: caller holds the erase's lane, key and item locks and the consumers' lanes; one row per consumer.
-- name: SourceCursorDeleteByScope :execrows
DELETE FROM pc_source_cursors
WHERE scope_id = sqlc.arg('scope_id');

-- Guard: caller verified the erase's claim under its item lock; at most limit Sources of one scope.
-- name: SourceDeleteBatch :execrows
DELETE FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
ORDER BY journal_position
LIMIT ?;

-- Guard: caller holds the head's lock (SourceJournalHeadLock) in the erase's domain commit, after its lane, key and
-- item locks; the next capture re-creates the head (insert-if-absent) and starts a fresh journal at position 1.
-- name: SourceJournalHeadDelete :execrows
DELETE FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id');

-- No lock; finished (succeeded/cancelled) items of one scope except one kind (the erases: their audit rows stay).
-- name: WorkItemListFinishedByScope :many
SELECT work_id
FROM pc_work_items
WHERE scope_id = sqlc.arg('scope_id')
  AND status IN ('succeeded', 'cancelled')
  AND kind <> sqlc.arg('except_kind')
LIMIT ?;

-- Guard: caller holds the lane's lock (WorkLaneLock) in the erase's domain commit; only an idle lane (no head) goes,
-- and the next enqueue re-creates it (insert-if-absent).
-- name: WorkLaneDeleteIdle :execrows
DELETE FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key')
  AND head_sequence IS NULL;
