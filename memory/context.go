package memory

import (
	"context"
	"sort"
	"unicode/utf8"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/sources"
)

// Context assembly (docs/api.md#get-v1context): the Memory entries and approved Experience lessons an agent should
// read before a step, within a token budget.

// Bounds of context assembly.
const (
	DefaultContextTokens = 2000
	MaxContextTokens     = 100000
	// maxContextLessons is how many approved lessons (newest first) are considered.
	maxContextLessons = 500
)

// Item kinds of an assembled context.
const (
	ItemMemory = "memory"
	ItemLesson = "lesson"
)

// ContextItem is one entry or lesson of an assembled context.
type ContextItem struct {
	Kind            string // ItemMemory or ItemLesson
	EntryNo         int32  // memory only
	EntryID         int64  // memory only: the entry's stable id (0: an entry an older build wrote)
	CandidateID     string // lesson only
	Title           string // lesson only
	Content         string
	SourcePositions []byte  // JSON array of journal positions (a lesson's cited positions)
	Score           float64 // relevance to the query; 0 when the item did not match it (or there is no query)
	Tokens          int     // EstimateTokens of Title + Content
	// Methods are a memory item's scores by method (lessons are ranked by full text only).
	Methods MethodScores
}

// Assembled is a context within its budget.
type Assembled struct {
	ScopeID    string
	Revision   int64 // the Memory revision read (0: none yet)
	MaxTokens  int
	UsedTokens int
	Items      []ContextItem
	// Omitted counts the candidates left out because they did not fit.
	Omitted int
	// Mode is the method that ranked the Memory entries (fts, semantic or hybrid); Degraded says a vector mode fell
	// back to fts because the query could not be embedded in time.
	Mode     string
	Degraded bool
}

// Assembler builds contexts from Memory and approved Experience lessons.
type Assembler struct {
	Memory  Reader
	Lessons experience.Reviews
}

// EstimateTokens is the documented approximate tokenizer: each Han, Hiragana, Katakana or Hangul character is one
// token; every other run of text costs one token per 4 bytes, rounded up.
func EstimateTokens(s string) int {
	tokens, other := 0, 0
	for _, r := range s {
		if isCJK(r) {
			tokens++
			tokens += (other + 3) / 4
			other = 0
			continue
		}
		other += utf8.RuneLen(r)
	}
	return tokens + (other+3)/4
}

// Assemble is AssembleMode in the default mode.
func (a Assembler) Assemble(ctx context.Context, scope, q string, maxTokens int) (Assembled, error) {
	return a.AssembleMode(ctx, scope, q, maxTokens, "")
}

// AssembleMode returns the items for query q (may be empty) within maxTokens. Order (and priority when the budget is
// short): Memory entries matching q by score — in mode fts those sharing any term with q (Rank), in mode semantic
// those whose vector matches q's, in mode hybrid either, fused (Reader.SearchMode says how the mode is chosen) —,
// approved lessons matching q by score (full text), the other approved lessons newest first, the other Memory
// entries newest first. Each item is taken whole when it fits in what is left of the budget and skipped otherwise;
// pending, rejected and withdrawn candidates are never included.
func (a Assembler) AssembleMode(ctx context.Context, scope, q string, maxTokens int, mode string) (Assembled, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return Assembled{}, err
	}
	if len(q) > 256 {
		return Assembled{}, &sources.ValidationError{Field: "q", Message: "must be at most 256 bytes"}
	}
	if maxTokens < 1 || maxTokens > MaxContextTokens {
		return Assembled{}, &sources.ValidationError{Field: "max_tokens", Message: "must be 1..100000"}
	}
	if err := checkMode(mode); err != nil {
		return Assembled{}, err
	}
	m, err := a.Memory.Current(ctx, scope)
	if err != nil {
		return Assembled{}, err
	}
	lessons, err := a.Lessons.List(ctx, scope, experience.StatusApproved, maxContextLessons)
	if err != nil {
		return Assembled{}, err
	}
	rk, err := a.Memory.rankEntries(ctx, scope, m.Revision, m.Entries, q, mode, false)
	if err != nil {
		return Assembled{}, err
	}
	memScore := map[int32]Ranked{}
	memPlace := map[int32]int{} // the ranking's order, ties already broken (fuse)
	for i, s := range rk.Ranked {
		memScore[s.Entry.EntryNo] = s
		memPlace[s.Entry.EntryNo] = i
	}
	lessonDocs := make([]db.MemoryEntry, len(lessons)) // ranked like entries: EntryNo is the recency order
	for i, l := range lessons {
		lessonDocs[i] = db.MemoryEntry{EntryNo: int32(len(lessons) - i), Content: l.Title + "\n" + l.Lesson}
	}
	lessonScore := map[int32]float64{}
	for _, s := range Rank(lessonDocs, q, false) {
		lessonScore[s.Entry.EntryNo] = s.Score
	}

	var items []ContextItem
	for _, e := range m.Entries {
		r := memScore[e.EntryNo]
		items = append(items, ContextItem{Kind: ItemMemory, EntryNo: e.EntryNo, EntryID: e.EntryID, Content: e.Content,
			SourcePositions: e.SourcePositions, Score: r.Score, Tokens: EstimateTokens(e.Content),
			Methods: MethodScores{FTS: r.FTS, Semantic: r.Semantic}})
	}
	for i, l := range lessons {
		items = append(items, ContextItem{Kind: ItemLesson, CandidateID: l.CandidateID, Title: l.Title, Content: l.Lesson,
			SourcePositions: l.CitedPositions, Score: lessonScore[lessonDocs[i].EntryNo],
			Tokens: EstimateTokens(l.Title) + EstimateTokens(l.Lesson), EntryNo: lessonDocs[i].EntryNo})
	}
	tier := func(it ContextItem) int {
		switch {
		case it.Kind == ItemMemory && it.Score > 0:
			return 0
		case it.Kind == ItemLesson && it.Score > 0:
			return 1
		case it.Kind == ItemLesson:
			return 2
		}
		return 3
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if ta, tb := tier(a), tier(b); ta != tb {
			return ta < tb
		}
		if tier(a) == 0 {
			return memPlace[a.EntryNo] < memPlace[b.EntryNo]
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.EntryNo > b.EntryNo // newer first (entries: later entry_no; lessons: the recency order above)
	})
	out := Assembled{ScopeID: scope, Revision: m.Revision, MaxTokens: maxTokens, Items: []ContextItem{}, Mode: rk.Mode,
		Degraded: rk.Degraded}
	for _, it := range items {
		if out.UsedTokens+it.Tokens > maxTokens {
			out.Omitted++
			continue
		}
		out.UsedTokens += it.Tokens
		if it.Kind == ItemLesson {
			it.EntryNo = 0
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}
