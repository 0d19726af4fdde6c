package provider

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/errclass"
)

func opsReq(existing ...MemoryEntry) ExtractMemoryRequest {
	return ExtractMemoryRequest{Existing: existing, Window: []Source{{Position: 10}, {Position: 11}, {Position: 12}}}
}

// TestApplyOpsKeepsIDs: an entry keeps its id when it is carried over, restated (its text stays, its positions
// grow) or superseded (new text, only the new positions); a removed entry is gone; a new entry gets the next id
// after lastID, even when the highest current id is lower (ids of removed entries are never given out again).
func TestApplyOpsKeepsIDs(t *testing.T) {
	req := opsReq(
		MemoryEntry{ID: 2, Content: "The service uses Go.", SourcePositions: []int64{1}},
		MemoryEntry{ID: 5, Content: "Staging uses PostgreSQL 16.", SourcePositions: []int64{2, 3}},
		MemoryEntry{ID: 6, Content: "Deploys are frozen.", SourcePositions: []int64{4}},
		MemoryEntry{ID: 9, Content: "Alice owns billing.", SourcePositions: []int64{5}},
	)
	ops := []MemoryOp{
		{Op: OpUpdate, EntryID: 2, Content: "the SERVICE uses go", SourcePositions: []int64{11, 10}},
		{Op: OpUpdate, EntryID: 5, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{12}},
		{Op: OpRemove, EntryID: 6, SourcePositions: []int64{12}},
		{Op: OpAdd, Content: "Releases ship on Tuesdays.", SourcePositions: []int64{10}},
		{Op: OpAdd, Content: "alice owns billing", SourcePositions: []int64{11}}, // restates entry 9
	}
	got, err := ApplyOps(req, ops, 12)
	require.NoError(t, err)
	require.Equal(t, Applied{Entries: []MemoryEntry{
		{ID: 2, Content: "The service uses Go.", SourcePositions: []int64{1, 10, 11}},
		{ID: 5, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{12}},
		{ID: 9, Content: "Alice owns billing.", SourcePositions: []int64{5, 11}},
		{ID: 13, Content: "Releases ship on Tuesdays.", SourcePositions: []int64{10}},
	}, Evicted: []int64{}, LastID: 13}, got)
	require.Equal(t, []int64{2, 3}, req.Existing[1].SourcePositions, "the input is not modified")

	// Removing and adding the same text again gives a new id: it is a new entry.
	got, err = ApplyOps(req, []MemoryOp{
		{Op: OpRemove, EntryID: 6, SourcePositions: []int64{10}},
		{Op: OpAdd, Content: "Deploys are frozen.", SourcePositions: []int64{11}},
	}, 12)
	require.NoError(t, err)
	require.Equal(t, MemoryEntry{ID: 13, Content: "Deploys are frozen.", SourcePositions: []int64{11}}, got.Entries[3])
}

// TestApplyOpsUpdateOntoAnotherEntry: an update whose new text is what another entry already says leaves one
// entry, the other one, restated; later operations naming the merged id act on it.
func TestApplyOpsUpdateOntoAnotherEntry(t *testing.T) {
	req := opsReq(
		MemoryEntry{ID: 1, Content: "Staging uses PostgreSQL 16.", SourcePositions: []int64{1}},
		MemoryEntry{ID: 2, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{2}},
	)
	got, err := ApplyOps(req, []MemoryOp{
		{Op: OpUpdate, EntryID: 1, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{10}},
		{Op: OpUpdate, EntryID: 1, Content: "Staging uses PostgreSQL 17!", SourcePositions: []int64{11}},
	}, 2)
	require.NoError(t, err)
	require.Equal(t, []MemoryEntry{{ID: 2, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{2, 10, 11}}}, got.Entries)

	_, err = ApplyOps(req, []MemoryOp{
		{Op: OpUpdate, EntryID: 1, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{10}},
		{Op: OpRemove, EntryID: 2, SourcePositions: []int64{10}},
		{Op: OpUpdate, EntryID: 1, Content: "Staging uses PostgreSQL 18.", SourcePositions: []int64{11}},
	}, 2)
	requireFailure(t, err, errclass.CodeInvalidOutput)
}

// TestApplyOpsEvicts: past MaxMemoryEntries the least recently confirmed entries leave, and Evicted names them,
// least recently confirmed first; the entries no op touched count as confirmed before every op, oldest first.
func TestApplyOpsEvicts(t *testing.T) {
	var existing []MemoryEntry
	for i := range MaxMemoryEntries {
		existing = append(existing, MemoryEntry{ID: int64(i + 1), Content: fmt.Sprintf("Fact number %d holds.", i+1), SourcePositions: []int64{1}})
	}
	req := opsReq(existing...)
	got, err := ApplyOps(req, []MemoryOp{
		{Op: OpUpdate, EntryID: 1, Content: "Fact number 1 holds.", SourcePositions: []int64{10}}, // confirmed: stays
		{Op: OpAdd, Content: "A new fact.", SourcePositions: []int64{10}},
		{Op: OpAdd, Content: "Another new fact.", SourcePositions: []int64{11}},
		{Op: OpAdd, Content: "A third new fact.", SourcePositions: []int64{12}},
	}, 600)
	require.NoError(t, err)
	require.Len(t, got.Entries, MaxMemoryEntries)
	require.Equal(t, []int64{2, 3, 4}, got.Evicted)
	require.EqualValues(t, 1, got.Entries[0].ID)
	require.EqualValues(t, 5, got.Entries[1].ID)
	require.Equal(t, []int64{601, 602, 603}, []int64{got.Entries[497].ID, got.Entries[498].ID, got.Entries[499].ID})
	require.EqualValues(t, 603, got.LastID)

	// Removing makes room: nothing is evicted.
	got, err = ApplyOps(req, []MemoryOp{
		{Op: OpRemove, EntryID: 300, SourcePositions: []int64{10}},
		{Op: OpAdd, Content: "A new fact.", SourcePositions: []int64{10}},
	}, 500)
	require.NoError(t, err)
	require.Len(t, got.Entries, MaxMemoryEntries)
	require.Empty(t, got.Evicted)
	require.NotNil(t, got.Evicted)
}

// TestApplyOpsRejects: operations CheckOps refuses, and current entries without an id, are provider/invalid_output.
func TestApplyOpsRejects(t *testing.T) {
	req := opsReq(MemoryEntry{ID: 4, Content: "A fact here.", SourcePositions: []int64{1}})
	for name, ops := range map[string][]MemoryOp{
		"unknown id":         {{Op: OpUpdate, EntryID: 5, Content: "x y", SourcePositions: []int64{10}}},
		"outside the window": {{Op: OpAdd, Content: "x y", SourcePositions: []int64{1}}},
		"no positions":       {{Op: OpRemove, EntryID: 4}},
		"removed twice": {{Op: OpRemove, EntryID: 4, SourcePositions: []int64{10}},
			{Op: OpRemove, EntryID: 4, SourcePositions: []int64{10}}},
		"add with an id": {{Op: OpAdd, EntryID: 4, Content: "x y", SourcePositions: []int64{10}}},
		"empty text":     {{Op: OpUpdate, EntryID: 4, Content: " \n ", SourcePositions: []int64{10}}},
		"unknown kind":   {{Op: "upsert", EntryID: 4, Content: "x y", SourcePositions: []int64{10}}},
	} {
		_, err := ApplyOps(req, ops, 4)
		requireFailure(t, err, errclass.CodeInvalidOutput)
		require.Error(t, CheckOps(req, ops), name)
	}
	_, err := ApplyOps(opsReq(MemoryEntry{Content: "No id yet.", SourcePositions: []int64{1}}), nil, 0)
	requireFailure(t, err, errclass.CodeInvalidOutput)
}

// TestLocalOpsKeepIDs: the local extractor's operations, applied over two windows, keep an entry's id through a
// restatement and a supersede, and number new entries after the last id.
func TestLocalOpsKeepIDs(t *testing.T) {
	first := extract(t, ExtractMemoryRequest{Window: []Source{{Position: 1, Content: "Staging uses PostgreSQL 16. Alice owns billing."}}})
	require.Equal(t, []MemoryEntry{
		{ID: 1, Content: "Staging uses PostgreSQL 16.", SourcePositions: []int64{1}},
		{ID: 2, Content: "Alice owns billing.", SourcePositions: []int64{1}},
	}, first)
	second := extract(t, ExtractMemoryRequest{Existing: first, Window: []Source{
		{Position: 2, Content: "Staging uses PostgreSQL 17. alice owns billing! Releases ship on Tuesdays."}}})
	require.Equal(t, []MemoryEntry{
		{ID: 1, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{2}},
		{ID: 2, Content: "Alice owns billing.", SourcePositions: []int64{1, 2}},
		{ID: 3, Content: "Releases ship on Tuesdays.", SourcePositions: []int64{2}},
	}, second)
}

// BenchmarkApplyOps: a full revision (MaxMemoryEntries entries) and a window's worth of operations — restatements,
// supersedes and adds that push it past the cap.
func BenchmarkApplyOps(b *testing.B) {
	var existing []MemoryEntry
	for i := range MaxMemoryEntries {
		existing = append(existing, MemoryEntry{ID: int64(i + 1), Content: fmt.Sprintf("Service %d runs in region eu-west-%d.", i, i),
			SourcePositions: []int64{int64(i + 1)}})
	}
	req := ExtractMemoryRequest{Existing: existing, Window: []Source{{Position: 1000}}}
	var ops []MemoryOp
	for i := range 100 {
		switch i % 3 {
		case 0:
			ops = append(ops, MemoryOp{Op: OpUpdate, EntryID: int64(i + 1), Content: existing[i].Content, SourcePositions: []int64{1000}})
		case 1:
			ops = append(ops, MemoryOp{Op: OpUpdate, EntryID: int64(i + 1), Content: fmt.Sprintf("Service %d moved.", i), SourcePositions: []int64{1000}})
		default:
			ops = append(ops, MemoryOp{Op: OpAdd, Content: fmt.Sprintf("New fact number %d.", i), SourcePositions: []int64{1000}})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyOps(req, ops, MaxMemoryEntries); err != nil {
			b.Fatal(err)
		}
	}
}
