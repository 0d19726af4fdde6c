package conv

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/powercontext/powercontext/db"
)

// SourceInsertManyScope is the one scope of a SourceInsertMany batch (ss is not empty); Sources of two scopes in
// one batch are an error.
func SourceInsertManyScope(ss []db.Source) (string, error) {
	scope := ss[0].ScopeID
	for _, s := range ss[1:] {
		if s.ScopeID != scope {
			return "", fmt.Errorf("SourceInsertMany: the Sources of one batch share one scope (%q, %q)", scope, s.ScopeID)
		}
	}
	return scope, nil
}

// sourceManyRow is one element of the JSON array that SQLite's SourceInsertMany reads with json_each: metadata in
// hex (unhex restores the exact bytes), times in unix microseconds, erased_at absent for a Source not forgotten.
type sourceManyRow struct {
	JournalPosition int64  `json:"journal_position"`
	SourceID        string `json:"source_id"`
	SourceType      string `json:"source_type"`
	Content         string `json:"content"`
	Metadata        string `json:"metadata"`
	CreatedAt       int64  `json:"created_at"`
	ErasedAt        *int64 `json:"erased_at,omitempty"`
}

// SourceInsertManyJSON is the JSON array of the rows of ss for SQLite's SourceInsertMany.
func SourceInsertManyJSON(ss []db.Source) (string, error) {
	rows := make([]sourceManyRow, len(ss))
	for i, s := range ss {
		rows[i] = sourceManyRow{JournalPosition: s.JournalPosition, SourceID: s.SourceID, SourceType: s.SourceType,
			Content: s.Content, Metadata: hex.EncodeToString(s.Metadata), CreatedAt: TimeToGen[int64](s.CreatedAt),
			ErasedAt: nullTimeToGen[int64](s.ErasedAt)}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rows); err != nil {
		return "", err
	}
	return b.String(), nil
}
