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
	Content         string
	SourcePositions []int64
}

// ExtractMemoryRequest asks for the scope's new memory: Existing (the current revision) merged with the facts
// found in Window.
type ExtractMemoryRequest struct {
	ScopeID  string
	Existing []MemoryEntry
	Window   []Source
}

// ExtractMemoryResponse is the complete new memory: existing entries merged with facts from the window.
type ExtractMemoryResponse struct {
	Entries []MemoryEntry
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

// Provider extracts memory and proposes lessons. Errors are *coordinator.HandlerError (possibly wrapped) with a
// bounded provider/* pair.
type Provider interface {
	// Name is a bounded metric label: "local" or "openai".
	Name() string
	ExtractMemory(ctx context.Context, req ExtractMemoryRequest) (ExtractMemoryResponse, error)
	IncubateExperience(ctx context.Context, req IncubateRequest) (IncubateResponse, error)
}

// Limits shared by every provider.
const (
	// MaxMemoryEntries caps a memory revision; the least recently confirmed entries are dropped first (mergeMemory).
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
