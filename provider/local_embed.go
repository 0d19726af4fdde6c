package provider

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The local embedder's space (docs/memory.md#the-local-embedder).
const (
	LocalEmbeddingModel      = "powercontext-local-ngram-v1"
	LocalEmbeddingDimensions = 512
	// LocalMinSimilarity is the cosine similarity from which a local vector counts as a match of a query: texts that
	// share no word, stem or trigram but through hash collisions and function words stay below it (calibrated on
	// short English and Chinese facts; docs/memory.md#the-local-embedder).
	LocalMinSimilarity = 0.18
)

// LocalEmbedder is the built-in deterministic embedder, used when no embeddings provider is configured. It needs no
// network: a text's vector is the feature-hashed sum of its words and their character trigrams (CJK runs: characters
// and character pairs), so texts that share words, word stems or a misspelt word land near each other. It is lexical,
// not semantic: "ship a release" does not come near "deploy on Tuesday". The zero value is ready to use.
type LocalEmbedder struct{}

var _ Embedder = LocalEmbedder{}

// NewLocalEmbedder returns the built-in deterministic embedder.
func NewLocalEmbedder() LocalEmbedder { return LocalEmbedder{} }

// Name implements Embedder.
func (LocalEmbedder) Name() string { return "local" }

// Model implements Embedder.
func (LocalEmbedder) Model() string { return LocalEmbeddingModel }

// Embed implements Embedder. A text with no letter or digit gets the zero vector (it matches nothing).
func (LocalEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, unavailable(ctx)
		}
		out[i] = LocalVector(t)
	}
	return out, nil
}

// Feature weights of the local embedder. A word counts as its whole form (plural folded) plus its trigrams (together
// twice the whole form's weight, so a word with one typo keeps about a third of its similarity and a plural most of
// it); the most common English function words count
// little, since the embedder has no corpus to learn that they carry no meaning.
const (
	localWordWeight     = 1.0
	localTrigramsWeight = 2.0 // shared by all trigrams of a word (each gets weight/sqrt(n))
	localStopWeight     = 0.15
	localCJKCharWeight  = 0.5
	localCJKPairWeight  = 1.0
)

var localStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be been but by can could do does did for from had has have
		how i if in into is it its me my no not of on or our so such than that the their them then there these they
		this those to too us was we were what when where which who whom why will with would you your`) {
		localStopWords[w] = true
	}
}

// LocalVector is the local embedder's unit vector of text (the zero vector when text has no letter or digit).
func LocalVector(text string) []float32 {
	v := make([]float32, LocalEmbeddingDimensions)
	add := func(feature string, w float64) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(feature))
		sum := h.Sum64()
		if sum>>63 == 1 {
			w = -w
		}
		v[sum%LocalEmbeddingDimensions] += float32(w)
	}
	eachLocalRun(foldText(text), func(run string, cjk bool) {
		if cjk {
			prev := ""
			for _, r := range run {
				c := string(r)
				add("c:"+c, localCJKCharWeight)
				if prev != "" {
					add("p:"+prev+c, localCJKPairWeight)
				}
				prev = c
			}
			return
		}
		scale := 1.0
		if localStopWords[run] {
			scale = localStopWeight
		}
		add("w:"+stem(run), localWordWeight*scale)
		padded := []rune("\x02" + run + "\x03")
		n := len(padded) - 2
		for i := 0; i < n; i++ {
			add("t:"+string(padded[i:i+3]), localTrigramsWeight*scale/math.Sqrt(float64(n)))
		}
	})
	if !normalize(v) {
		clear(v)
	}
	return v
}

// stem drops an English plural ending from a word of more than three letters ("releases" → "release", "backups" →
// "backup"; "class", "status" and "analysis" stay), so the whole-word feature matches across singular and plural.
func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") &&
		!strings.HasSuffix(w, "is") {
		return w[:len(w)-1]
	}
	return w
}

// foldText is the text the local embedder reads: compatibility-decomposed (full-width forms become ASCII, ligatures
// split), without combining marks (é becomes e), lowercased.
func foldText(s string) string {
	s = norm.NFKD.String(strings.ToValidUTF8(s, " "))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	// Recompose Hangul (NFKD splits syllables into jamo) and anything else that composes back.
	return norm.NFC.String(b.String())
}

// eachLocalRun calls fn with each run of letters and digits of text: words, and CJK runs (Han, kana, Hangul) apart.
func eachLocalRun(text string, fn func(run string, cjk bool)) {
	start, startCJK := -1, false
	flush := func(end int) {
		if start >= 0 {
			fn(text[start:end], startCJK)
			start = -1
		}
	}
	for i, r := range text {
		cjk := r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
		word := cjk || unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !word:
			flush(i)
		case start >= 0 && cjk != startCJK:
			flush(i)
			start, startCJK = i, cjk
		case start < 0:
			start, startCJK = i, cjk
		}
	}
	flush(len(text))
}
