package memory

import (
	"context"
	"errors"
	"slices"

	"github.com/powercontext/powercontext/db"
)

// WithEntryIDs returns a copy of entries — the entries of the scope's latest revision, latest — in which every
// entry has its stable id (docs/memory.md#entry-ids), and the highest id the scope has given out.
//
// Entries written before ids existed, or by an older build, have none. When latest records ids, its LastEntryID is
// the highest id. When it does not (an older build wrote it: its EvictedEntryIDs is NULL), the newest revision that
// does is read (MemoryRevisionLatestWithEntryIDs): its LastEntryID is the highest id, and an entry without an id
// whose text (the Diff key) is that of one of its entries takes that entry's id, so a revision an older build wrote
// during a rolling upgrade does not break the entries' identity. Every other entry without an id gets the next id,
// in entry order. An id once given out is never given out again.
func WithEntryIDs(ctx context.Context, q db.Queries, latest db.MemoryRevision, entries []db.MemoryEntry) ([]db.MemoryEntry, int64, error) {
	last := latest.LastEntryID
	var known map[string]int64 // the Diff key of an entry of the newest revision with ids -> its id
	if latest.Revision > 0 && latest.EvictedEntryIDs == nil {
		prev, err := q.MemoryRevisionLatestWithEntryIDs(ctx, latest.ScopeID)
		switch {
		case errors.Is(err, db.ErrNotFound): // the scope's revisions all predate ids
		case err != nil:
			return nil, 0, err
		case HasEntryIDs(entries): // nothing to give an id to (an older build's empty revision)
			last = max(last, prev.LastEntryID)
		default:
			last = max(last, prev.LastEntryID)
			had, err := q.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: prev.ScopeID, Revision: prev.Revision})
			if err != nil {
				return nil, 0, err
			}
			known = make(map[string]int64, len(had))
			for _, e := range had {
				if k := entryKey(e.Content); e.EntryID > 0 && known[k] == 0 {
					known[k] = e.EntryID
				}
			}
		}
	}
	used := make(map[int64]bool, len(entries))
	for _, e := range entries {
		last = max(last, e.EntryID)
		used[e.EntryID] = true
	}
	out := slices.Clone(entries)
	for i := range out {
		if out[i].EntryID != 0 {
			continue
		}
		if id := known[entryKey(out[i].Content)]; id > 0 && !used[id] {
			out[i].EntryID, used[id] = id, true
			continue
		}
		last++
		out[i].EntryID = last
	}
	return out, last, nil
}

// HasEntryIDs reports whether every entry of a revision has an id (true for no entries): Diff matches such
// revisions by id.
func HasEntryIDs(entries []db.MemoryEntry) bool {
	for _, e := range entries {
		if e.EntryID == 0 {
			return false
		}
	}
	return true
}
