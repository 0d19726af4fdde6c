// Package portability moves one scope between deployments (docs/portability.md): Export writes a scope's state as
// a versioned JSON Lines stream, Import writes such a stream into an empty scope in one transaction. It sits with
// lifecycle above the domain packages.
package portability

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Format names the stream; FormatVersion is the version this build writes and the newest it reads.
const (
	Format        = "powercontext.scope-export"
	FormatVersion = 1
)

// Record types: the "type" member of every line.
const (
	TypeHeader      = "header"
	TypeJournalHead = "journal_head"
	TypeCursor      = "cursor"
	TypeSource      = "source"
	TypeTombstone   = "tombstone"
	TypeRevision    = "revision"
	TypeEntry       = "entry"
	TypeEmbedding   = "embedding"
	TypeCandidate   = "candidate"
	TypeTrailer     = "trailer"
)

// RecordTypes are the record types in the order a stream holds them (the header first, the trailer last).
var RecordTypes = []string{TypeHeader, TypeJournalHead, TypeCursor, TypeSource, TypeTombstone, TypeRevision, TypeEntry,
	TypeEmbedding, TypeCandidate, TypeTrailer}

// SchemaRange is the range of schema (migration) versions the exporting binary ran against; zero when unknown.
type SchemaRange struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// Counts are the records of each kind a stream holds; the header carries them and Import checks them.
type Counts struct {
	Sources    int64 `json:"sources"`
	Tombstones int64 `json:"tombstones"`
	Cursors    int64 `json:"cursors"`
	Revisions  int64 `json:"revisions"`
	Entries    int64 `json:"entries"`
	Embeddings int64 `json:"embeddings"`
	Candidates int64 `json:"candidates"`
}

// Header is the first line.
type Header struct {
	Type          string      `json:"type"`
	Format        string      `json:"format"`
	FormatVersion int         `json:"format_version"`
	BinaryVersion string      `json:"binary_version"`
	Schema        SchemaRange `json:"schema"`
	ScopeID       string      `json:"scope_id"`
	ExportedAt    string      `json:"exported_at"`
	Embeddings    bool        `json:"embeddings"`
	Counts        Counts      `json:"counts"`
}

// JournalHead is the scope's journal high-watermark.
type JournalHead struct {
	Type     string `json:"type"`
	Position int64  `json:"position"`
}

// Cursor is one domain cursor of the scope.
type Cursor struct {
	Type       string `json:"type"`
	CursorName string `json:"cursor_name"`
	Position   int64  `json:"position"`
	Generation int64  `json:"generation"`
}

// Source is one captured Source that was not forgotten.
type Source struct {
	Type            string          `json:"type"`
	JournalPosition int64           `json:"journal_position"`
	SourceID        string          `json:"source_id"`
	SourceType      string          `json:"source_type"`
	Content         string          `json:"content"`
	Metadata        json.RawMessage `json:"metadata"`
	CreatedAt       string          `json:"created_at"`
}

// Tombstone is a forgotten Source: its position and id stay, its text never leaves the database.
type Tombstone struct {
	Type            string `json:"type"`
	JournalPosition int64  `json:"journal_position"`
	SourceID        string `json:"source_id"`
	SourceType      string `json:"source_type"`
	CreatedAt       string `json:"created_at"`
	ErasedAt        string `json:"erased_at"`
}

// Revision is one Memory revision; its entries (and vectors) follow it.
type Revision struct {
	Type             string  `json:"type"`
	Revision         int64   `json:"revision"`
	WorkID           string  `json:"work_id"`
	CursorGeneration int64   `json:"cursor_generation"`
	WindowAfter      int64   `json:"window_after"`
	WindowThrough    int64   `json:"window_through"`
	EntryCount       int32   `json:"entry_count"`
	CreatedAt        string  `json:"created_at"`
	LastEntryID      *int64  `json:"last_entry_id"`
	EvictedEntryIDs  []int64 `json:"evicted_entry_ids"` // null: a revision an older build wrote
}

// Entry is one Memory entry of the revision before it.
type Entry struct {
	Type            string  `json:"type"`
	Revision        int64   `json:"revision"`
	EntryNo         int32   `json:"entry_no"`
	EntryID         *int64  `json:"entry_id"`
	Content         string  `json:"content"`
	SourcePositions []int64 `json:"source_positions"`
	CreatedAt       string  `json:"created_at"`
}

// Embedding is one entry's vector (only with Options.Embeddings): little-endian float32, base64.
type Embedding struct {
	Type       string `json:"type"`
	Revision   int64  `json:"revision"`
	EntryNo    int32  `json:"entry_no"`
	Model      string `json:"model"`
	Dimensions int32  `json:"dimensions"`
	Vector     []byte `json:"vector"`
	CreatedAt  string `json:"created_at"`
}

// Candidate is one Experience candidate with its review state.
type Candidate struct {
	Type           string  `json:"type"`
	CandidateID    string  `json:"candidate_id"`
	WorkID         string  `json:"work_id"`
	Title          string  `json:"title"`
	Lesson         string  `json:"lesson"`
	CitedPositions []int64 `json:"cited_positions"`
	Status         string  `json:"status"`
	StateVersion   int64   `json:"state_version"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// Trailer is the last line: how many lines came before it (the header included) and the SHA-256 over them, each
// with its newline.
type Trailer struct {
	Type   string `json:"type"`
	Lines  int64  `json:"lines"`
	SHA256 string `json:"sha256"`
}

//go:embed schema/*.schema.json
var schemaFS embed.FS

var schemas = sync.OnceValues(func() (map[string]*jsonschema.Resolved, error) {
	out := make(map[string]*jsonschema.Resolved, len(RecordTypes))
	for _, t := range RecordTypes {
		b, err := schemaFS.ReadFile("schema/" + t + ".schema.json")
		if err != nil {
			return nil, err
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("portability: schema %s: %w", t, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("portability: schema %s: %w", t, err)
		}
		out[t] = r
	}
	return out, nil
})

// Validate checks one line against the JSON Schema of its record type (portability/schema/<type>.schema.json) and
// returns its type.
func Validate(line []byte) (string, error) {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		// A fixed sentence, not the decoder's text (which names Go types).
		return "", errors.New("not a JSON value, or a number beyond the range of a double")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("not a JSON object")
	}
	t, _ := obj["type"].(string)
	all, err := schemas()
	if err != nil {
		return "", err
	}
	s, ok := all[t]
	if !ok {
		return "", fmt.Errorf("unknown record type %q", t)
	}
	if err := s.Validate(v); err != nil {
		return t, err
	}
	return t, nil
}
