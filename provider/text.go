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

// mergeOps expresses the local extractor's merge rule (docs/memory.md#merge-rule) as operations against the
// existing entries' ids. For each fact, in order, contents normalised and capped at MaxEntryBytes (empty ones
// dropped): a fact equal to an entry (factKey) restates it; a fact with the same subject as an entry (SubjectKeys)
// supersedes it in place; any other fact is new. Within the facts a later one restates or supersedes an earlier
// new one the same way. The ops: one update per existing entry the facts touched, carrying its final text and the
// positions of the facts since it was last superseded (all of them when it was only restated), and one add per
// new entry with its final text and positions — plus a second, identical add (a restatement once applied) when it
// was confirmed again later. They are ordered by when the facts last confirmed each entry (adds first appear where
// the entry first did), so ApplyOps keeps new entries in the order they appeared and evicts in the order of
// confirmation. The inputs are not modified; the result is never nil.
func mergeOps(existing, facts []MemoryEntry) []MemoryOp {
	type slot struct {
		id          int64 // 0: a new entry
		content     string
		positions   []int64 // the facts' positions since the entry was last superseded
		first, last int     // clocks of the facts that first and last confirmed it (0: none)
	}
	slots := make([]slot, 0, len(existing)+len(facts))
	index := make(map[string]int, len(existing)+len(facts))
	subjects := make(map[string]int, len(existing)+len(facts))
	register := func(i int, override bool) {
		index[factKey(slots[i].content)] = i
		for _, k := range SubjectKeys(slots[i].content) {
			if _, taken := subjects[k]; override || !taken {
				subjects[k] = i
			}
		}
	}
	for _, e := range existing {
		slots = append(slots, slot{id: e.ID, content: e.Content})
		if _, dup := index[factKey(e.Content)]; !dup {
			register(len(slots)-1, false)
		}
	}
	clock := 0
	for _, f := range facts {
		content := truncateUTF8(normalizeText(f.Content), MaxEntryBytes)
		if content == "" {
			continue
		}
		clock++
		if i, ok := index[factKey(content)]; ok {
			slots[i].positions = sortedUnique(append(slots[i].positions, f.SourcePositions...))
			slots[i].last = clock
			continue
		}
		superseded := false
		for _, sk := range SubjectKeys(content) {
			i, ok := subjects[sk]
			if !ok {
				continue
			}
			delete(index, factKey(slots[i].content))
			for _, old := range SubjectKeys(slots[i].content) {
				if subjects[old] == i {
					delete(subjects, old)
				}
			}
			slots[i].content, slots[i].positions, slots[i].last = content, sortedUnique(f.SourcePositions), clock
			if slots[i].first == 0 {
				slots[i].first = clock
			}
			register(i, true)
			superseded = true
			break
		}
		if superseded {
			continue
		}
		slots = append(slots, slot{content: content, positions: sortedUnique(f.SourcePositions), first: clock, last: clock})
		register(len(slots)-1, false)
	}
	type event struct {
		clock int
		op    MemoryOp
	}
	var events []event
	for _, s := range slots {
		switch {
		case s.last == 0: // untouched
		case s.id != 0:
			events = append(events, event{s.last, MemoryOp{Op: OpUpdate, EntryID: s.id, Content: s.content, SourcePositions: s.positions}})
		default:
			add := MemoryOp{Op: OpAdd, Content: s.content, SourcePositions: s.positions}
			events = append(events, event{s.first, add})
			if s.last > s.first {
				events = append(events, event{s.last, add})
			}
		}
	}
	sort.SliceStable(events, func(a, b int) bool { return events[a].clock < events[b].clock })
	ops := make([]MemoryOp, 0, len(events))
	for _, ev := range events {
		ops = append(ops, ev.op)
	}
	return ops
}

// SubjectKeys are the keys under which two facts are taken to state the same subject, so the later one supersedes
// the earlier (docs/memory.md#merge-rule). The keys are taken from the fact key without its time qualifiers
// (stripQualifiers: "now", "as of …", 现在, 目前 …), so "Staging uses PostgreSQL 17 now" corrects "… 16" like "… 17"
// does. The qualifier-free key itself is one key (a fact restated with or without "now" is the same fact); two more,
// each only where it is a fair guess:
//   - the value key: the fact key with every run of numerals (any script's digits, Chinese numerals) replaced by
//     "#" — for a fact written without spaces (Chinese, Japanese) wherever the numerals are ("每天早上八点开会"
//     and "九点"), for other text only when they all sit in the last of at least three words ("Staging uses
//     PostgreSQL 16" and "… 17"; "Ticket 42 is blocked" and "Ticket 43 is blocked" are two facts);
//   - the word key: the fact key without its last space-separated word, when the fact has at least four words —
//     "The deploy script lives in ops/deploy.sh" and "… in ops/release.sh" (three-word facts such as "Alice owns
//     billing" and "Alice owns payroll" are too short to tell a change from a second fact).
func SubjectKeys(content string) []string {
	key := stripQualifiers(factKey(normalizeText(content)))
	words := strings.Fields(key)
	keys := []string{"q:" + key}
	if valueKeyApplies(words) {
		var b strings.Builder
		inRun := false
		for _, r := range key {
			if isNumeral(r) {
				if !inRun {
					b.WriteByte('#')
				}
				inRun = true
				continue
			}
			inRun = false
			b.WriteRune(r)
		}
		if strings.Trim(b.String(), "# ") != "" {
			keys = append(keys, "v:"+b.String())
		}
	}
	if len(words) >= 4 {
		keys = append(keys, "w:"+strings.Join(words[:len(words)-1], " "))
	}
	return keys
}

// Time qualifiers that say when a fact holds, not what it states (stripQualifiers). Single words are dropped
// wherever they stand ("Staging now uses …"); phrases only at the start or the end of the fact.
var (
	qualifierWords   = []string{"now", "currently", "already", "nowadays", "presently", "still"}
	qualifierPhrases = [][]string{{"today"}, {"again"}, {"these", "days"}, {"right", "now"}, {"for", "now"},
		{"at", "the", "moment"}, {"at", "present"}, {"from", "now", "on"}, {"going", "forward"}, {"as", "of", "now"}}
	// cjkQualifiers are removed wherever they stand in Chinese text (longest first). 现在 is kept after a character
	// with which it forms another word (出现在 "appears in", 表现在, 体现在, 实现在 …).
	cjkQualifiers    = []string{"到目前为止", "截至目前", "截止目前", "截至今天", "截止今天", "现在", "目前", "当前", "如今", "眼下", "已经"}
	cjkBeforeXianZai = "出表体实发展"
)

// qualifierPunct is trimmed from the edges of the key and of its words when matching qualifiers.
const qualifierPunct = "()[],;:—-，、：；（） "

// stripQualifiers removes time qualifiers from a fact key (factKey): the CJK ones above, a trailing 了/啦, the
// single words anywhere, the phrases and "as of …" (to the end, or up to a comma when it opens the fact) at either
// end. A key that would be left empty is returned as it was.
func stripQualifiers(key string) string {
	orig := key
	var b strings.Builder
	prev := rune(0)
outer:
	for i := 0; i < len(key); {
		for _, q := range cjkQualifiers {
			if strings.HasPrefix(key[i:], q) && (q != "现在" || !strings.ContainsRune(cjkBeforeXianZai, prev)) {
				i += len(q)
				prev = 0
				continue outer
			}
		}
		r, size := utf8.DecodeRuneInString(key[i:])
		b.WriteRune(r)
		prev = r
		i += size
	}
	key = strings.Trim(b.String(), qualifierPunct+".!?。！？")
	for _, p := range []string{"了", "啦"} {
		key = strings.TrimRight(strings.TrimSuffix(key, p), qualifierPunct)
	}

	bare := func(w string) string { return strings.Trim(w, qualifierPunct) }
	var words []string
	for _, w := range strings.Fields(key) {
		if !slices.Contains(qualifierWords, bare(w)) {
			words = append(words, w)
		}
	}
	// is reports whether ws, matched word by word without edge punctuation, is the phrase.
	is := func(ws []string, phrase []string) bool {
		if len(ws) != len(phrase) {
			return false
		}
		for i, p := range phrase {
			if bare(ws[i]) != p {
				return false
			}
		}
		return true
	}
	for changed := true; changed; {
		changed = false
		for _, p := range qualifierPhrases {
			if len(words) > len(p) && is(words[:len(p)], p) {
				words, changed = words[len(p):], true
			}
			if len(words) > len(p) && is(words[len(words)-len(p):], p) {
				words, changed = words[:len(words)-len(p)], true
			}
		}
		// "as of …" to the end, when it is among the last six words.
		for i := max(1, len(words)-6); i+1 < len(words); i++ {
			if bare(words[i]) == "as" && bare(words[i+1]) == "of" {
				words, changed = words[:i], true
				break
			}
		}
		// "As of …, " opening the fact.
		if len(words) > 3 && bare(words[0]) == "as" && bare(words[1]) == "of" {
			for i := 2; i < min(len(words)-1, 7); i++ {
				if strings.HasSuffix(words[i], ",") {
					words, changed = words[i+1:], true
					break
				}
			}
		}
	}
	key = strings.Trim(strings.Join(words, " "), qualifierPunct)
	if key == "" {
		return orig
	}
	return key
}

// valueKeyApplies: the fact has numerals, and either no spaces or numerals only in the last of three or more words.
func valueKeyApplies(words []string) bool {
	has := func(w string) bool { return strings.IndexFunc(w, isNumeral) >= 0 }
	switch {
	case len(words) == 1:
		return has(words[0])
	case len(words) < 3 || !has(words[len(words)-1]):
		return false
	}
	for _, w := range words[:len(words)-1] {
		if has(w) {
			return false
		}
	}
	return true
}

// isNumeral reports a digit (any script's decimal digit) or a Chinese numeral.
func isNumeral(r rune) bool {
	return unicode.IsDigit(r) || strings.ContainsRune("零〇一二两三四五六七八九十百千万亿", r)
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
