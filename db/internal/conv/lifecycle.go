package conv

import "github.com/powercontext/powercontext/db"

// The shapes of the data lifecycle statements (db/lifecycle.go).

type sourceListErasable[T Time] = struct {
	CreatedBefore T
	Limit         int32
}

type sourcePosition = struct {
	ScopeID         string
	JournalPosition int64
}

// SourceListErasableToGen builds the parameters of SourceListErasable.
func SourceListErasableToGen[P ~sourceListErasable[T], T Time](p db.SourceListErasableParams) P {
	return P(sourceListErasable[T]{CreatedBefore: TimeToGen[T](p.CreatedBefore), Limit: p.Limit})
}

// SourcePositionFromGen converts a row naming one Source.
func SourcePositionFromGen[R ~sourcePosition](r R) db.SourcePosition { return db.SourcePosition(r) }

type experienceCandidateWithdraw[T Time] = struct {
	UpdatedAt   T
	CandidateID string
}

type memoryRevisionRef = struct {
	ScopeID  string
	Revision int64
}

// ExperienceCandidateWithdrawToGen builds the parameters of ExperienceCandidateWithdraw.
func ExperienceCandidateWithdrawToGen[P ~experienceCandidateWithdraw[T], T Time](p db.ExperienceCandidateWithdrawParams) P {
	return P(experienceCandidateWithdraw[T]{UpdatedAt: TimeToGen[T](p.UpdatedAt), CandidateID: p.CandidateID})
}

// MemoryRevisionRefFromGen converts a row naming one revision.
func MemoryRevisionRefFromGen[R ~memoryRevisionRef](r R) db.MemoryRevisionRef {
	return db.MemoryRevisionRef(r)
}
