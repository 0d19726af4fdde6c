-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Stable entry ids (docs/memory.md#entry-ids): an entry keeps its entry_id, unique within its scope, from revision
-- to revision while it is carried over, restated or superseded; entry_no stays the order within a revision. A
-- revision records last_entry_id, the highest id the scope had given out, so an id is never given out twice, and
-- evicted_entry_ids, the JSON array of the ids the 500-entry cap dropped (docs/memory.md#eviction). All three are
-- nullable: an older binary inserts rows without them, and the next revision gives such entries their ids.
ALTER TABLE pc_memory_entries ADD COLUMN entry_id bigint NULL;
ALTER TABLE pc_memory_revisions ADD COLUMN last_entry_id bigint NULL;
ALTER TABLE pc_memory_revisions ADD COLUMN evicted_entry_ids bytea NULL;
