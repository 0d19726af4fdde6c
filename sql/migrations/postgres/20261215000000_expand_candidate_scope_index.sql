-- atlas:txmode none

-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- A scope's Experience candidates in candidate id order (ExperienceCandidateListByScopeAfter: the export's pages and
-- a Forget's search for the candidates citing a Source) are read through this index, page by page, instead of
-- through the (scope_id, status, created_at) index and a sort of every candidate of the scope on every page.
CREATE INDEX CONCURRENTLY pc_experience_candidates_scope_candidate_idx ON pc_experience_candidates (scope_id, candidate_id);
