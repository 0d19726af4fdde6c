package provider

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalizeText makes s valid UTF-8, trims it and collapses every run of whitespace into one space.
func normalizeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.Fields(s), " ")
}

// truncateUTF8 cuts s to at most max bytes without splitting a rune. s must be valid UTF-8.
func truncateUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRightFunc(s[:cut], unicode.IsSpace)
}

// splitFragments splits content into lines, then each line into sentences (cut after '.', '!', '?' or their
// full-width forms when followed by whitespace or the end of the line). Fragments are not normalised.
func splitFragments(content string) []string {
	content = strings.ToValidUTF8(content, "\uFFFD")
	var out []string
	lines := strings.FieldsFunc(content, func(r rune) bool { return r == '\n' || r == '\r' })
	for _, line := range lines {
		start := 0
		for i, r := range line {
			if !isSentenceEnd(r) {
				continue
			}
			next := i + utf8.RuneLen(r)
			if next < len(line) {
				nr, _ := utf8.DecodeRuneInString(line[next:])
				if !unicode.IsSpace(nr) {
					continue
				}
			}
			out = append(out, line[start:next])
			start = next
		}
		if start < len(line) {
			out = append(out, line[start:])
		}
	}
	return out
}

func isSentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？':
		return true
	}
	return false
}

// trimBullet removes leading list markers ("- ", "* ", "• ", "> ", "# ") from a normalised fragment.
func trimBullet(s string) string {
	for {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !strings.ContainsRune("-*•>#", r) {
			return s
		}
		rest := strings.TrimLeft(s[size:], "-*•>#")
		if rest == "" || rest[0] != ' ' {
			return s
		}
		s = strings.TrimLeft(rest, " ")
	}
}

// isFact reports whether a normalised fragment is long enough and contains a letter or digit.
func isFact(s string) bool {
	if utf8.RuneCountInString(s) < MinFactRunes {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// factKey is the case-insensitive de-duplication key of a normalised fact (trailing punctuation ignored).
func factKey(s string) string {
	return strings.ToLower(strings.TrimRight(s, ".!?;:,。！？ "))
}

// sortedUnique returns a sorted, de-duplicated copy of positions (never aliasing the input).
func sortedUnique(positions []int64) []int64 {
	out := slices.Clone(positions)
	if out == nil {
		out = []int64{}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedWindow returns the window in journal order (stable by position), without modifying the input.
func sortedWindow(window []Source) []Source {
	out := slices.Clone(window)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Position < out[j].Position })
	return out
}

// mergeMemory merges new facts into existing memory: contents are normalised and capped at MaxEntryBytes,
// empty entries dropped, duplicates (case-insensitive) folded into the first occurrence with their positions
// merged (sorted, unique), new facts appended in order, and the result capped at MaxMemoryEntries by dropping the
// oldest. The inputs are not modified. The result is never nil.
func mergeMemory(existing, facts []MemoryEntry) []MemoryEntry {
	out := make([]MemoryEntry, 0, len(existing)+len(facts))
	index := make(map[string]int, len(existing)+len(facts))
	add := func(e MemoryEntry) {
		content := truncateUTF8(normalizeText(e.Content), MaxEntryBytes)
		if content == "" {
			return
		}
		key := factKey(content)
		if i, ok := index[key]; ok {
			out[i].SourcePositions = sortedUnique(append(out[i].SourcePositions, e.SourcePositions...))
			return
		}
		index[key] = len(out)
		out = append(out, MemoryEntry{Content: content, SourcePositions: sortedUnique(e.SourcePositions)})
	}
	for _, e := range existing {
		add(e)
	}
	for _, f := range facts {
		add(f)
	}
	if len(out) > MaxMemoryEntries {
		out = slices.Clone(out[len(out)-MaxMemoryEntries:])
	}
	return out
}

// firstSentence returns the first sentence of a normalised text, or the whole text when it has no sentence end.
func firstSentence(s string) string {
	for _, f := range splitFragments(s) {
		if f = normalizeText(f); f != "" {
			return f
		}
	}
	return ""
}
