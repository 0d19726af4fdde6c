package memory

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// ErrRevisionNotFound is returned for a revision that was never committed or was purged by retention.
var ErrRevisionNotFound = errors.New("memory: revision not found")

// MaxHistoryLimit is the largest page of Revisions.
const MaxHistoryLimit = 100

// EvictedIDs reads the ids a revision's entry cap dropped (docs/memory.md#eviction): nil when the revision does not
// record them (an older build wrote it), never nil otherwise.
func EvictedIDs(r db.MemoryRevision) []int64 { return evictedOf(r) }

// Revisions returns up to limit revisions of a scope below before (0 = from the newest), newest first. limit may
// exceed MaxHistoryLimit by one, so a caller can tell whether another page follows.
func (r Reader) Revisions(ctx context.Context, scope string, before int64, limit int) ([]db.MemoryRevision, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxHistoryLimit+1 {
		return nil, &sources.ValidationError{Field: "limit", Message: "must be 1..100"}
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	return r.Store.MemoryRevisionList(ctx, db.MemoryRevisionListParams{ScopeID: scope, BeforeRevision: before, Limit: int32(limit)})
}

// At returns one revision of a scope and its entries (ErrRevisionNotFound if it does not exist).
func (r Reader) At(ctx context.Context, scope string, revision int64) (Memory, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return Memory{}, err
	}
	rev, err := r.Store.MemoryRevisionGet(ctx, db.MemoryRevisionGetParams{ScopeID: scope, Revision: revision})
	if errors.Is(err, db.ErrNotFound) {
		return Memory{}, ErrRevisionNotFound
	}
	if err != nil {
		return Memory{}, err
	}
	entries, err := r.Store.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: revision})
	if err != nil {
		return Memory{}, err
	}
	return Memory{ScopeID: scope, Revision: revision, CreatedAt: rev.CreatedAt, Entries: entries, Evicted: evictedOf(rev)}, nil
}

// Diff is what changed in a scope's Memory from one revision to another.
type Diff struct {
	ScopeID  string
	From, To Memory
	Added    []db.MemoryEntry // in To only
	Removed  []db.MemoryEntry // in From only
	Changed  []Change         // the same fact in both, restated or cited from other Sources
}

// Change is one fact present in both revisions whose content or source positions differ.
type Change struct {
	From, To db.MemoryEntry
}

// Diff compares two revisions of a scope (docs/memory.md#diff). When every entry of both has an id, entries are
// matched by id: an entry kept, restated or superseded is the same entry, Changed when its text or positions differ.
// Otherwise (a revision an older build wrote) they are matched by their fact key: the content lowercased, with
// whitespace collapsed and trailing punctuation ignored (the key the local extractor de-duplicates on); a matched
// pair whose text or positions differ is Changed, and so is an entry superseded in place (pairSuperseded). from may
// be 0 (the empty Memory before the first revision).
func (r Reader) Diff(ctx context.Context, scope string, from, to int64) (Diff, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return Diff{}, err
	}
	if from < 0 {
		return Diff{}, &sources.ValidationError{Field: "from", Message: "must be 0 or a revision"}
	}
	if to < 1 {
		return Diff{}, &sources.ValidationError{Field: "to", Message: "must be a revision (>= 1)"}
	}
	d := Diff{ScopeID: scope, From: Memory{ScopeID: scope}}
	var err error
	if from > 0 {
		if d.From, err = r.At(ctx, scope, from); err != nil {
			return Diff{}, err
		}
	}
	if d.To, err = r.At(ctx, scope, to); err != nil {
		return Diff{}, err
	}
	if HasEntryIDs(d.From.Entries) && HasEntryIDs(d.To.Entries) {
		diffByID(&d)
		return d, nil
	}
	old := make(map[string][]db.MemoryEntry, len(d.From.Entries))
	for _, e := range d.From.Entries {
		k := entryKey(e.Content)
		old[k] = append(old[k], e)
	}
	for _, e := range d.To.Entries {
		k := entryKey(e.Content)
		if prev := old[k]; len(prev) > 0 {
			old[k] = prev[1:]
			if prev[0].Content != e.Content || !bytes.Equal(prev[0].SourcePositions, e.SourcePositions) {
				d.Changed = append(d.Changed, Change{From: prev[0], To: e})
			}
			continue
		}
		d.Added = append(d.Added, e)
	}
	for _, e := range d.From.Entries {
		k := entryKey(e.Content)
		if rest := old[k]; len(rest) > 0 && rest[0].EntryNo == e.EntryNo {
			d.Removed = append(d.Removed, e)
			old[k] = rest[1:]
		}
	}
	pairSuperseded(&d)
	return d, nil
}

// diffByID matches the entries of d.From and d.To by id.
func diffByID(d *Diff) {
	old := make(map[int64]db.MemoryEntry, len(d.From.Entries))
	for _, e := range d.From.Entries {
		old[e.EntryID] = e
	}
	for _, e := range d.To.Entries {
		prev, ok := old[e.EntryID]
		if !ok {
			d.Added = append(d.Added, e)
			continue
		}
		delete(old, e.EntryID)
		if prev.Content != e.Content || !bytes.Equal(prev.SourcePositions, e.SourcePositions) {
			d.Changed = append(d.Changed, Change{From: prev, To: e})
		}
	}
	for _, e := range d.From.Entries {
		if _, gone := old[e.EntryID]; gone {
			d.Removed = append(d.Removed, e)
		}
	}
}

// pairSuperseded turns a removed and an added entry at the same entry number that state the same subject (the
// merge rule's provider.SubjectKeys: a corrected fact supersedes its entry in place) into one Changed pair.
func pairSuperseded(d *Diff) {
	if len(d.Removed) == 0 || len(d.Added) == 0 {
		return
	}
	removed := make(map[int32]int, len(d.Removed))
	for i, e := range d.Removed {
		removed[e.EntryNo] = i
	}
	gone := make([]bool, len(d.Removed))
	added := d.Added[:0:0]
	for _, e := range d.Added {
		i, ok := removed[e.EntryNo]
		if ok && !gone[i] && sameSubject(d.Removed[i].Content, e.Content) {
			gone[i] = true
			d.Changed = append(d.Changed, Change{From: d.Removed[i], To: e})
			continue
		}
		added = append(added, e)
	}
	d.Added = added
	rest := d.Removed[:0:0]
	for i, e := range d.Removed {
		if !gone[i] {
			rest = append(rest, e)
		}
	}
	d.Removed = rest
}

func sameSubject(a, b string) bool {
	for _, ka := range provider.SubjectKeys(a) {
		for _, kb := range provider.SubjectKeys(b) {
			if ka == kb {
				return true
			}
		}
	}
	return false
}

// entryKey is the matching key of Diff.
func entryKey(content string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(content), " ")), ".!?;:,。！？ ")
}
