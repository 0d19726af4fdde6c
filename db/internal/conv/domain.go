package conv

import (
	"github.com/powercontext/powercontext/db"
)

// The shapes below are the generated structs of the domain tables, identical on the three engines but for T.

type source[T Time] = struct {
	ScopeID         string
	JournalPosition int64
	SourceID        string
	SourceType      string
	Content         string
	Metadata        []byte
	CreatedAt       T
}

type sourceRow[T Time] = struct {
	ScopeID         string
	JournalPosition int64
	SourceID        string
	SourceType      string
	Content         string
	Metadata        []byte
	CreatedAt       T
	ErasedAt        *T
}

type sourceJournalHead[T Time] = struct {
	ScopeID   string
	Position  int64
	UpdatedAt T
}

type sourceJournalHeadUpdate[T Time] = struct {
	Position  int64
	UpdatedAt T
	ScopeID   string
}

type sourceCursor[T Time] = struct {
	ScopeID    string
	CursorName string
	Position   int64
	Generation int64
	UpdatedAt  T
}

type sourceCursorAdvance[T Time] = struct {
	Position       int64
	Generation     int64
	UpdatedAt      T
	ScopeID        string
	CursorName     string
	FromPosition   int64
	FromGeneration int64
}

type memoryRevision[T Time] = struct {
	ScopeID          string
	Revision         int64
	WorkID           string
	CursorGeneration int64
	WindowAfter      int64
	WindowThrough    int64
	EntryCount       int32
	CreatedAt        T
	LastEntryID      *int64
	EvictedEntryIds  []byte
}

type memoryEntry[T Time] = struct {
	ScopeID         string
	Revision        int64
	EntryNo         int32
	Content         string
	SourcePositions []byte
	CreatedAt       T
	EntryID         *int64
}

type experienceCandidate[T Time] = struct {
	CandidateID    string
	ScopeID        string
	WorkID         string
	Title          string
	Lesson         string
	CitedPositions []byte
	Status         string
	StateVersion   int64
	CreatedAt      T
	UpdatedAt      T
}

type experienceCandidateList = struct {
	ScopeID string
	Status  *string
	Limit   int32
}

type experienceCandidateListByStatusAfter[T Time] = struct {
	ScopeID          string
	Status           string
	AfterCreatedAt   T
	AfterCandidateID string
	Limit            int32
}

type experienceCandidateUpdateStatus[T Time] = struct {
	Status          string
	UpdatedAt       T
	CandidateID     string
	ExpectedVersion int64
}

// SourceFromGen converts a pc_sources row.
func SourceFromGen[T Time, R ~sourceRow[T]](g R) db.Source {
	r := sourceRow[T](g)
	return db.Source{
		ScopeID:         r.ScopeID,
		JournalPosition: r.JournalPosition,
		SourceID:        r.SourceID,
		SourceType:      r.SourceType,
		Content:         r.Content,
		Metadata:        r.Metadata,
		CreatedAt:       TimeFromGen(r.CreatedAt),
		ErasedAt:        nullTimeFromGen(r.ErasedAt),
	}
}

// SourceToGen builds the parameters of SourceInsert.
func SourceToGen[P ~source[T], T Time](s db.Source) P {
	return P(source[T]{
		ScopeID:         s.ScopeID,
		JournalPosition: s.JournalPosition,
		SourceID:        s.SourceID,
		SourceType:      s.SourceType,
		Content:         s.Content,
		Metadata:        s.Metadata,
		CreatedAt:       TimeToGen[T](s.CreatedAt),
	})
}

// SourceJournalHeadFromGen converts a pc_source_journal_heads row.
func SourceJournalHeadFromGen[T Time, R ~sourceJournalHead[T]](g R) db.SourceJournalHead {
	r := sourceJournalHead[T](g)
	return db.SourceJournalHead{ScopeID: r.ScopeID, Position: r.Position, UpdatedAt: TimeFromGen(r.UpdatedAt)}
}

// SourceJournalHeadUpdateToGen builds the parameters of SourceJournalHeadUpdate.
func SourceJournalHeadUpdateToGen[P ~sourceJournalHeadUpdate[T], T Time](h db.SourceJournalHead) P {
	return P(sourceJournalHeadUpdate[T]{Position: h.Position, UpdatedAt: TimeToGen[T](h.UpdatedAt), ScopeID: h.ScopeID})
}

// SourceCursorFromGen converts a pc_source_cursors row.
func SourceCursorFromGen[T Time, R ~sourceCursor[T]](g R) db.SourceCursor {
	r := sourceCursor[T](g)
	return db.SourceCursor{
		ScopeID:    r.ScopeID,
		CursorName: r.CursorName,
		Position:   r.Position,
		Generation: r.Generation,
		UpdatedAt:  TimeFromGen(r.UpdatedAt),
	}
}

// SourceCursorToGen builds the parameters of SourceCursorInsert.
func SourceCursorToGen[P ~sourceCursor[T], T Time](c db.SourceCursor) P {
	return P(sourceCursor[T]{
		ScopeID:    c.ScopeID,
		CursorName: c.CursorName,
		Position:   c.Position,
		Generation: c.Generation,
		UpdatedAt:  TimeToGen[T](c.UpdatedAt),
	})
}

// SourceCursorAdvanceToGen builds the parameters of SourceCursorAdvance.
func SourceCursorAdvanceToGen[P ~sourceCursorAdvance[T], T Time](p db.SourceCursorAdvanceParams) P {
	return P(sourceCursorAdvance[T]{
		Position:       p.Cursor.Position,
		Generation:     p.Cursor.Generation,
		UpdatedAt:      TimeToGen[T](p.Cursor.UpdatedAt),
		ScopeID:        p.Cursor.ScopeID,
		CursorName:     p.Cursor.CursorName,
		FromPosition:   p.FromPosition,
		FromGeneration: p.FromGeneration,
	})
}

// MemoryRevisionFromGen converts a pc_memory_revisions row.
func MemoryRevisionFromGen[T Time, R ~memoryRevision[T]](g R) db.MemoryRevision {
	r := memoryRevision[T](g)
	return db.MemoryRevision{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       r.EntryCount,
		CreatedAt:        TimeFromGen(r.CreatedAt),
		LastEntryID:      seqFromGen(r.LastEntryID),
		EvictedEntryIDs:  r.EvictedEntryIds,
	}
}

// memoryRevisionList is MemoryRevisionList's parameters; SQLite's LIMIT is an int64.
type memoryRevisionList[L int32 | int64] = struct {
	ScopeID        string
	BeforeRevision int64
	Limit          L
}

// MemoryRevisionListToGen builds the parameters of MemoryRevisionList.
func MemoryRevisionListToGen[P ~memoryRevisionList[L], L int32 | int64](p db.MemoryRevisionListParams) P {
	return P(memoryRevisionList[L]{ScopeID: p.ScopeID, BeforeRevision: p.BeforeRevision, Limit: L(p.Limit)})
}

// MemoryRevisionToGen builds the parameters of MemoryRevisionInsert.
func MemoryRevisionToGen[P ~memoryRevision[T], T Time](r db.MemoryRevision) P {
	return P(memoryRevision[T]{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       r.EntryCount,
		CreatedAt:        TimeToGen[T](r.CreatedAt),
		LastEntryID:      seqToGen(r.LastEntryID),
		EvictedEntryIds:  r.EvictedEntryIDs,
	})
}

// MemoryEntryFromGen converts a pc_memory_entries row.
func MemoryEntryFromGen[T Time, R ~memoryEntry[T]](g R) db.MemoryEntry {
	r := memoryEntry[T](g)
	return db.MemoryEntry{
		ScopeID:         r.ScopeID,
		Revision:        r.Revision,
		EntryNo:         r.EntryNo,
		Content:         r.Content,
		SourcePositions: r.SourcePositions,
		CreatedAt:       TimeFromGen(r.CreatedAt),
		EntryID:         seqFromGen(r.EntryID),
	}
}

// MemoryEntryToGen builds the parameters of MemoryEntryInsert.
func MemoryEntryToGen[P ~memoryEntry[T], T Time](e db.MemoryEntry) P {
	return P(memoryEntry[T]{
		ScopeID:         e.ScopeID,
		Revision:        e.Revision,
		EntryNo:         e.EntryNo,
		Content:         e.Content,
		SourcePositions: e.SourcePositions,
		CreatedAt:       TimeToGen[T](e.CreatedAt),
		EntryID:         seqToGen(e.EntryID),
	})
}

// ExperienceCandidateFromGen converts a pc_experience_candidates row.
func ExperienceCandidateFromGen[T Time, R ~experienceCandidate[T]](g R) db.ExperienceCandidate {
	r := experienceCandidate[T](g)
	return db.ExperienceCandidate{
		CandidateID:    r.CandidateID,
		ScopeID:        r.ScopeID,
		WorkID:         r.WorkID,
		Title:          r.Title,
		Lesson:         r.Lesson,
		CitedPositions: r.CitedPositions,
		Status:         r.Status,
		StateVersion:   r.StateVersion,
		CreatedAt:      TimeFromGen(r.CreatedAt),
		UpdatedAt:      TimeFromGen(r.UpdatedAt),
	}
}

// ExperienceCandidateToGen builds the parameters of ExperienceCandidateInsert.
func ExperienceCandidateToGen[P ~experienceCandidate[T], T Time](c db.ExperienceCandidate) P {
	return P(experienceCandidate[T]{
		CandidateID:    c.CandidateID,
		ScopeID:        c.ScopeID,
		WorkID:         c.WorkID,
		Title:          c.Title,
		Lesson:         c.Lesson,
		CitedPositions: c.CitedPositions,
		Status:         c.Status,
		StateVersion:   c.StateVersion,
		CreatedAt:      TimeToGen[T](c.CreatedAt),
		UpdatedAt:      TimeToGen[T](c.UpdatedAt),
	})
}

// ExperienceCandidateListToGen builds the parameters of ExperienceCandidateList (status "" = any = NULL).
func ExperienceCandidateListToGen[P ~experienceCandidateList](p db.ExperienceCandidateListParams) P {
	return P(experienceCandidateList{ScopeID: p.ScopeID, Status: TextToGen(p.Status), Limit: p.Limit})
}

// ExperienceCandidateListByStatusAfterToGen builds the parameters of ExperienceCandidateListByStatusAfter.
func ExperienceCandidateListByStatusAfterToGen[P ~experienceCandidateListByStatusAfter[T], T Time](p db.ExperienceCandidateListByStatusAfterParams) P {
	return P(experienceCandidateListByStatusAfter[T]{ScopeID: p.ScopeID, Status: p.Status, AfterCreatedAt: TimeToGen[T](p.AfterCreatedAt),
		AfterCandidateID: p.AfterCandidateID, Limit: p.Limit})
}

// ExperienceCandidateUpdateStatusToGen builds the parameters of ExperienceCandidateUpdateStatus.
func ExperienceCandidateUpdateStatusToGen[P ~experienceCandidateUpdateStatus[T], T Time](p db.ExperienceCandidateUpdateStatusParams) P {
	return P(experienceCandidateUpdateStatus[T]{
		Status:          p.Status,
		UpdatedAt:       TimeToGen[T](p.UpdatedAt),
		CandidateID:     p.CandidateID,
		ExpectedVersion: p.ExpectedVersion,
	})
}
