-- The claim candidate query reads each due status in (available_at, created_at) order through one index and stops
-- after its limit, instead of sorting every lane head (issue 9, B2). The new index has the old one as its prefix,
-- so it replaces it (one ALTER, so no moment without either).
ALTER TABLE pc_work_items DROP INDEX pc_work_items_status_available_idx, ADD INDEX pc_work_items_status_due_idx (status, available_at, created_at);
