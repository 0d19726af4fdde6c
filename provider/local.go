package provider

import "context"

// Local is the built-in deterministic extractor (the default provider). It makes no network calls, and the same
// input always yields the same output. The zero value is ready to use.
type Local struct{}

// NewLocal returns the built-in deterministic provider.
func NewLocal() *Local { return &Local{} }

var _ Provider = (*Local)(nil)

// Name implements Provider.
func (*Local) Name() string { return "local" }

// ExtractMemory splits each window Source into sentences and lines, keeps the normalised fragments that look like
// facts, and answers the operations that merge them into the existing memory (mergeOps,
// docs/memory.md#merge-rule).
func (*Local) ExtractMemory(_ context.Context, req ExtractMemoryRequest) (ExtractMemoryResponse, error) {
	var facts []MemoryEntry
	for _, src := range sortedWindow(req.Window) {
		for _, frag := range splitFragments(src.Content) {
			fact := trimBullet(normalizeText(frag))
			if !isFact(fact) {
				continue
			}
			facts = append(facts, MemoryEntry{Content: fact, SourcePositions: []int64{src.Position}})
		}
	}
	return ExtractMemoryResponse{Ops: mergeOps(req.Existing, facts)}, nil
}

// IncubateExperience proposes one Lesson per task-outcome Source, in journal order. The title is the first
// sentence (at most MaxTitleBytes), the lesson the normalised content (at most MaxLessonBytes); string metadata
// fields "title" and "lesson" take precedence. Sources with nothing to say are skipped.
func (*Local) IncubateExperience(_ context.Context, req IncubateRequest) (IncubateResponse, error) {
	candidates := []Lesson{}
	for _, src := range sortedWindow(req.Window) {
		lesson := normalizeText(src.Content)
		if v, ok := src.Metadata["lesson"].(string); ok {
			if v = normalizeText(v); v != "" {
				lesson = v
			}
		}
		title := ""
		if v, ok := src.Metadata["title"].(string); ok {
			title = normalizeText(v)
		}
		if title == "" {
			title = firstSentence(lesson)
		}
		if lesson == "" {
			lesson = title
		}
		if lesson == "" {
			continue
		}
		candidates = append(candidates, Lesson{
			Title:          truncateUTF8(title, MaxTitleBytes),
			Lesson:         truncateUTF8(lesson, MaxLessonBytes),
			CitedPositions: []int64{src.Position},
		})
	}
	return IncubateResponse{Candidates: candidates}, nil
}
