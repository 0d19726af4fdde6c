package memory

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/powercontext/powercontext/db"
)

// Ranked search (docs/api.md#get-v1memorysearch).
//
// One tokenizer and one scoring function, in Go, rank Memory identically on PostgreSQL, MySQL/MariaDB and SQLite.
// The engines' own full-text features disagree on exactly the content this serves: MariaDB has no ngram FULLTEXT
// parser, so a Chinese word inside a sentence without spaces is not a token there, and the three rankers (ts_rank,
// MATCH … AGAINST, FTS5 bm25) give different orders. A revision is capped at provider.MaxMemoryEntries entries of at
// most provider.MaxEntryBytes each, so scoring the current revision on each query is bounded (about 0.5 MB of text;
// see memory.BenchmarkRank) and needs no index to keep in step with redaction and scope erase.

// BM25 parameters (the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// isCJK reports whether r is written without spaces between words: Han, Hiragana, Katakana, Hangul.
func isCJK(r rune) bool {
	return r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

func isWordRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// Tokens splits text into search terms: lowercased runs of Unicode letters and digits; a run of CJK characters
// becomes its overlapping character bigrams plus (for documents, so a one-character query can match) its single
// characters. A query uses the bigrams of a CJK run, or the character itself when the run is one character long.
func Tokens(text string, query bool) []string {
	var out []string
	eachToken(text, query, func(tok string) { out = append(out, tok) })
	return out
}

// eachToken calls fn with each term of text (see Tokens), as substrings of the lowercased text (no copies).
func eachToken(text string, query bool, fn func(string)) {
	text = strings.ToLower(text)
	word, run, runLen := -1, -1, 0 // byte offsets of the current word and CJK run (-1: none)
	prev := 0                      // byte offset of the previous rune of the CJK run
	endRun := func(end int) {
		switch {
		case run < 0:
		case runLen == 1:
			fn(text[run:end])
		case !query:
			for i := run; i < end; {
				_, n := utf8.DecodeRuneInString(text[i:])
				fn(text[i : i+n])
				i += n
			}
		}
		run, runLen = -1, 0
	}
	for i, r := range text {
		switch {
		case isCJK(r):
			if word >= 0 {
				fn(text[word:i])
				word = -1
			}
			if run < 0 {
				run = i
			} else {
				fn(text[prev : i+utf8.RuneLen(r)]) // the bigram ending here
			}
			prev = i
			runLen++
		case isWordRune(r):
			endRun(i)
			if word < 0 {
				word = i
			}
		default:
			if word >= 0 {
				fn(text[word:i])
				word = -1
			}
			endRun(i)
		}
	}
	if word >= 0 {
		fn(text[word:])
	}
	endRun(len(text))
}

// Scored is a memory entry with its relevance to a query.
type Scored struct {
	Entry db.MemoryEntry
	Score float64
}

// Rank scores entries against query with BM25 over the entries themselves (the corpus is the revision) and returns
// those containing every query term (all) or at least one (!all), best first; ties go to the later entry (the more
// recent fact).
func Rank(entries []db.MemoryEntry, query string, all bool) []Scored {
	terms := uniq(Tokens(query, true))
	if len(terms) == 0 || len(entries) == 0 {
		return nil
	}
	want := make(map[string]int, len(terms))
	for i, t := range terms {
		want[t] = i
	}
	type doc struct {
		length int
		tf     []int
	}
	docs := make([]doc, len(entries))
	df := make([]int, len(terms))
	total := 0
	for i, e := range entries {
		var d doc
		eachToken(e.Content, false, func(tok string) {
			d.length++
			if j, ok := want[tok]; ok {
				if d.tf == nil {
					d.tf = make([]int, len(terms))
				}
				if d.tf[j] == 0 {
					df[j]++
				}
				d.tf[j]++
			}
		})
		total += d.length
		docs[i] = d
	}
	n := float64(len(entries))
	avg := math.Max(float64(total)/n, 1)
	idf := make([]float64, len(terms))
	for j := range terms {
		idf[j] = math.Log(1 + (n-float64(df[j])+0.5)/(float64(df[j])+0.5))
	}
	var out []Scored
	for i, d := range docs {
		if d.tf == nil {
			continue
		}
		if all && slices.Contains(d.tf, 0) {
			continue
		}
		score := 0.0
		for j, tf := range d.tf {
			if tf == 0 {
				continue
			}
			f := float64(tf)
			score += idf[j] * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(d.length)/avg))
		}
		out = append(out, Scored{Entry: entries[i], Score: math.Round(score*1e4) / 1e4})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].Entry.EntryNo > out[b].Entry.EntryNo
	})
	return out
}

func uniq(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
