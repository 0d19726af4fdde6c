package provider

import "context"

// Source is one piece of captured evidence from a scope's journal, as handed to a provider.
type Source struct {
	Position int64
	Type     string
	Content  string
	Metadata map[string]any
}

// MemoryEntry is one remembered fact with the journal positions of the Sources it came from (sorted, unique).
type MemoryEntry struct {
	// ID is the entry's stable id within its scope (docs/memory.md#entry-ids): every entry of
	// ExtractMemoryRequest.Existing has one (> 0), and a MemoryOp names an entry by it.
	ID              int64
	Content         string
	SourcePositions []int64
}

// ExtractMemoryRequest asks what the facts found in Window change in Existing, the current revision.
type ExtractMemoryRequest struct {
	ScopeID  string
	Existing []MemoryEntry
	Window   []Source
}

// ExtractMemoryResponse is the change to the current entries, as operations against their ids applied in order
// (ApplyOps, docs/memory.md#operations). No operations leave the entries as they are.
type ExtractMemoryResponse struct {
	Ops []MemoryOp
}

// Lesson is a proposed Experience candidate; a human approves or rejects it.
type Lesson struct {
	Title, Lesson  string
	CitedPositions []int64
}

// IncubateRequest carries the window of task-outcome Sources (only task-outcome Sources are passed).
type IncubateRequest struct {
	ScopeID string
	Window  []Source
}

// IncubateResponse holds the proposed (pending) candidates.
type IncubateResponse struct {
	Candidates []Lesson
}

// Provider extracts memory and proposes lessons. Errors are *errclass.Error (possibly wrapped) with a
// bounded provider/* pair.
type Provider interface {
	// Name is a bounded metric label: "local" or "openai".
	Name() string
	ExtractMemory(ctx context.Context, req ExtractMemoryRequest) (ExtractMemoryResponse, error)
	IncubateExperience(ctx context.Context, req IncubateRequest) (IncubateResponse, error)
}

// Limits shared by every provider.
const (
	// MaxMemoryEntries caps a memory revision; the least recently confirmed entries are dropped first (ApplyOps).
	MaxMemoryEntries = 500
	// MaxEntryBytes caps one memory entry's content (cut on a UTF-8 boundary).
	MaxEntryBytes = 1000
	// MaxTitleBytes caps a lesson title (cut on a UTF-8 boundary).
	MaxTitleBytes = 120
	// MaxLessonBytes caps a lesson body (cut on a UTF-8 boundary).
	MaxLessonBytes = 2000
	// MinFactRunes is the shortest fragment kept as a fact; shorter fragments are dropped.
	MinFactRunes = 4
)
