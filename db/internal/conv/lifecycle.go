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
