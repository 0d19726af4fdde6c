package provider

import (
	"slices"
	"sort"
)

// Memory operations (docs/memory.md#operations): a provider answers a window with changes to the current entries,
// addressed by their stable ids, each carrying the window positions that justify it. ApplyOps turns them into the
// next revision.

// Operation kinds of MemoryOp.Op.
const (
	// OpAdd states a new fact. An add whose text restates a current entry (the restatement key of
	// docs/memory.md#merge-rule) confirms that entry instead of adding a second one.
	OpAdd = "add"
	// OpUpdate changes entry EntryID: when the text restates the entry, the entry keeps its text and gains the
	// positions (a restatement); otherwise it takes the text and only the op's positions (a supersede), keeping
	// its id.
	OpUpdate = "update"
	// OpRemove drops entry EntryID from the next revision; its positions say which Sources retract it.
	OpRemove = "remove"
)

// MemoryOp is one change a provider asks for.
type MemoryOp struct {
	Op      string // OpAdd, OpUpdate or OpRemove
	EntryID int64  // OpUpdate, OpRemove: the id of a current entry; 0 for OpAdd
	Content string // OpAdd, OpUpdate: the fact (normalised and capped at MaxEntryBytes when applied)
	// SourcePositions are the window positions that justify the change: at least one, each a position of the
	// request's window.
	SourcePositions []int64
}

// Applied is the next revision: the entries in order, each with its id, and what the entry cap dropped.
type Applied struct {
	Entries []MemoryEntry
	// Evicted are the ids of the entries the MaxMemoryEntries cap dropped, least recently confirmed first
	// (docs/memory.md#eviction); never nil.
	Evicted []int64
	// LastID is the highest id given out: the lastID passed in, or the id of the last added entry.
	LastID int64
}

// CheckOps reports whether ops are valid against req: every op has a known kind; an add names no id; an update or
// a remove names an entry of req.Existing that no earlier op of the list removed; an add or an update has text left
// after normalisation; every op cites at least one position and only positions of req.Window. A failure is
// provider/invalid_output (bounded: it says nothing of the content).
func CheckOps(req ExtractMemoryRequest, ops []MemoryOp) error {
	known := make(map[int64]bool, len(req.Existing))
	for _, e := range req.Existing {
		known[e.ID] = true
	}
	window := windowPositions(req.Window)
	for _, op := range ops {
		switch op.Op {
		case OpAdd:
			if op.EntryID != 0 {
				return errInvalidOutput()
			}
		case OpUpdate, OpRemove:
			if op.EntryID <= 0 || !known[op.EntryID] {
				return errInvalidOutput()
			}
		default:
			return errInvalidOutput()
		}
		if op.Op != OpRemove && normalizeText(op.Content) == "" {
			return errInvalidOutput()
		}
		if !validPositions(op.SourcePositions, window) {
			return errInvalidOutput()
		}
		if op.Op == OpRemove {
			known[op.EntryID] = false
		}
	}
	return nil
}

// ApplyOps applies ops, in order, to req.Existing — whose entries must all carry ids (MemoryEntry.ID > 0) — and
// returns the next revision (docs/memory.md#operations). New entries get the ids lastID+1, lastID+2, … in the
// order they are added. Entries keep their order; added ones follow. Past MaxMemoryEntries the least recently
// confirmed entries are dropped: an entry is confirmed by the op that adds, restates or supersedes it, and the
// entries no op touched count as confirmed before every op, in their order. Invalid ops (CheckOps) are
// provider/invalid_output. The inputs are not modified.
func ApplyOps(req ExtractMemoryRequest, ops []MemoryOp, lastID int64) (Applied, error) {
	if err := CheckOps(req, ops); err != nil {
		return Applied{}, err
	}
	type slot struct {
		e         MemoryEntry
		confirmed int // the clock of the op that last confirmed it
		removed   bool
	}
	slots := make([]slot, 0, len(req.Existing)+len(ops))
	byID := make(map[int64]int, len(req.Existing)+len(ops))
	byKey := make(map[string]int, len(req.Existing)+len(ops))
	index := func(i int) {
		if _, taken := byKey[factKey(slots[i].e.Content)]; !taken {
			byKey[factKey(slots[i].e.Content)] = i
		}
	}
	unindex := func(i int) {
		if k := factKey(slots[i].e.Content); byKey[k] == i {
			delete(byKey, k)
		}
	}
	clock := 0
	for _, e := range req.Existing {
		if e.ID <= 0 {
			return Applied{}, errInvalidOutput() // a caller bug, reported like an invalid answer: never stored
		}
		clock++
		slots = append(slots, slot{e: MemoryEntry{ID: e.ID, Content: e.Content, SourcePositions: sortedUnique(e.SourcePositions)},
			confirmed: clock})
		byID[e.ID] = len(slots) - 1
		index(len(slots) - 1)
	}
	restate := func(i int, positions []int64) {
		slots[i].e.SourcePositions = sortedUnique(append(slices.Clone(slots[i].e.SourcePositions), positions...))
		slots[i].confirmed = clock
	}
	for _, op := range ops {
		clock++
		content := truncateUTF8(normalizeText(op.Content), MaxEntryBytes)
		key := factKey(content)
		switch op.Op {
		case OpAdd:
			if i, ok := byKey[key]; ok {
				restate(i, op.SourcePositions)
				continue
			}
			lastID++
			slots = append(slots, slot{e: MemoryEntry{ID: lastID, Content: content, SourcePositions: sortedUnique(op.SourcePositions)},
				confirmed: clock})
			byID[lastID] = len(slots) - 1
			index(len(slots) - 1)
		case OpUpdate:
			i := byID[op.EntryID]
			if slots[i].removed { // only through an alias of a merged entry whose target was removed since
				return Applied{}, errInvalidOutput()
			}
			if key == factKey(slots[i].e.Content) {
				restate(i, op.SourcePositions)
				continue
			}
			if j, ok := byKey[key]; ok {
				// The corrected text is what entry j already says: j is restated and i, now a duplicate, leaves;
				// later ops naming i act on j.
				restate(j, op.SourcePositions)
				unindex(i)
				slots[i].removed = true
				byID[op.EntryID] = j
				continue
			}
			unindex(i)
			slots[i].e = MemoryEntry{ID: op.EntryID, Content: content, SourcePositions: sortedUnique(op.SourcePositions)}
			slots[i].confirmed = clock
			index(i)
		case OpRemove:
			i := byID[op.EntryID]
			if slots[i].removed {
				return Applied{}, errInvalidOutput()
			}
			unindex(i)
			slots[i].removed = true
		}
	}
	live := slots[:0:0]
	for _, s := range slots {
		if !s.removed {
			live = append(live, s)
		}
	}
	out := Applied{Entries: make([]MemoryEntry, 0, min(len(live), MaxMemoryEntries)), Evicted: []int64{}, LastID: lastID}
	drop := make([]bool, len(live))
	if len(live) > MaxMemoryEntries {
		order := make([]int, len(live))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return live[order[a]].confirmed < live[order[b]].confirmed })
		for _, i := range order[:len(live)-MaxMemoryEntries] {
			drop[i] = true
			out.Evicted = append(out.Evicted, live[i].e.ID)
		}
	}
	for i, s := range live {
		if !drop[i] {
			out.Entries = append(out.Entries, s.e)
		}
	}
	return out, nil
}
