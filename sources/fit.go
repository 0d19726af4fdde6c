package sources

import (
	"unicode/utf8"

	"github.com/powercontext/powercontext/db"
)

// DefaultMaxRequestBytes is the default byte budget of one provider request (docs/protocol.md#windows-that-fit):
// 96 KiB, about 24k tokens of English or 32k of CJK text, so that a 32k-context model keeps room for the
// instructions and its answer.
const DefaultMaxRequestBytes = 96 << 10

// sourceOverheadBytes is what one Source costs in a request beyond its content and metadata (position, type, JSON
// framing).
const sourceOverheadBytes = 64

// MinSourceBudget is the share of the request budget a window always gets, however large the rest of the request
// (for Memory: the current entries) is.
func MinSourceBudget(budget int) int { return budget / 4 }

// Fit narrows a window to the Sources that fit budget bytes (docs/protocol.md#windows-that-fit). It returns the
// longest prefix of srcs whose content, metadata and framing fit, and the payload with Through moved to the last
// position included: committing it advances the cursor that far only, and the rest of the window becomes the next
// window, committed after it in lane order. The first Source is always included; when it alone is over budget its
// content is cut at a UTF-8 boundary for the provider (the stored Source stays intact) and truncated is true.
// budget <= 0 means no budget.
func Fit(srcs []db.Source, p WindowPayload, budget int) (fit []db.Source, narrowed WindowPayload, truncated bool) {
	if budget <= 0 || len(srcs) == 0 {
		return srcs, p, false
	}
	used := 0
	n := 0
	for _, s := range srcs {
		cost := len(s.Content) + len(s.Metadata) + sourceOverheadBytes
		if n > 0 && used+cost > budget {
			break
		}
		used += cost
		n++
	}
	fit = srcs[:n]
	narrowed = p
	narrowed.Through = fit[n-1].JournalPosition
	if n == 1 && used > budget {
		first := fit[0]
		keep := max(budget-len(first.Metadata)-sourceOverheadBytes, budget/2)
		if keep < len(first.Content) {
			first.Content = cutUTF8(first.Content, keep)
			truncated = true
		}
		fit = []db.Source{first}
	}
	return fit, narrowed, truncated
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a rune boundary.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
