package portability

import (
	"context"
	"io"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/sources"
)

// Service exports and imports scopes on behalf of a principal, recording each request as an operation
// (docs/portability.md#audit). The HTTP API calls it.
type Service struct {
	Store       db.Store
	Ledger      *coordinator.Ledger
	MaxAttempts int32
	// Schema is this deployment's range of schema versions, written into export headers.
	Schema SchemaRange
	// Wake wakes an in-process worker after a record is enqueued; optional.
	Wake func()
}

func (s *Service) record(ctx context.Context, kind, scope string, payload any) (db.WorkItem, error) {
	res, err := s.Ledger.Enqueue(ctx, RecordRequest(kind, scope, payload, s.MaxAttempts))
	if err != nil {
		return db.WorkItem{}, err
	}
	if res.Created && s.Wake != nil {
		s.Wake()
	}
	return res.Item, nil
}

// Export records the export of scope by principal (a scope_export operation) and then writes the stream to w.
func (s *Service) Export(ctx context.Context, scope, principal string, embeddings bool, w io.Writer) (db.WorkItem, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return db.WorkItem{}, err
	}
	item, err := s.record(ctx, KindExport, scope, ExportRecord{Type: PublicKindExport, RequestedBy: principal, Embeddings: embeddings})
	if err != nil {
		return db.WorkItem{}, err
	}
	_, err = Exporter{Store: s.Store}.Export(ctx, scope, w, Options{Embeddings: embeddings, Schema: s.Schema})
	return item, err
}

// recordTimeout bounds the write of an import's record once the import committed.
const recordTimeout = 30 * time.Second

// Import imports the stream r into the empty scope target and records it (a scope_import operation with the
// counts) once it committed.
func (s *Service) Import(ctx context.Context, r io.Reader, target, principal string) (ImportResult, db.WorkItem, error) {
	if err := sources.ValidateScope(target); err != nil {
		return ImportResult{}, db.WorkItem{}, err
	}
	res, err := Importer{Store: s.Store}.Import(ctx, r, ImportOptions{AsScope: target})
	if err != nil {
		return res, db.WorkItem{}, err
	}
	// The scope is written: its record must not be lost to a client that leaves now (the request's context ends
	// with it). A database failure here still leaves the import without its record; the error says so to the caller.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	item, err := s.record(rctx, KindImport, target, ImportRecord{Type: PublicKindImport, RequestedBy: principal,
		SourceScopeID: res.SourceScopeID, Counts: res.Counts})
	return res, item, err
}
