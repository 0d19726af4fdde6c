package portability

import (
	"context"
	"io"

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

// record enqueues an operation record (RecordRequest, perhaps with writes of its own) and wakes the worker when it
// created one.
func (s *Service) record(ctx context.Context, req coordinator.EnqueueRequest) (db.WorkItem, error) {
	res, err := s.Ledger.Enqueue(ctx, req)
	if err != nil {
		return db.WorkItem{}, err
	}
	if res.Created && s.Wake != nil {
		s.Wake()
	}
	return res.Item, nil
}

// Export records the export of scope by principal (a scope_export operation) and then writes the stream to w. A
// scope Exportable refuses is refused before the record, so no operation claims an export that never ran.
func (s *Service) Export(ctx context.Context, scope, principal string, embeddings bool, w io.Writer) (db.WorkItem, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return db.WorkItem{}, err
	}
	if err := Exportable(ctx, s.Store, scope); err != nil {
		return db.WorkItem{}, err
	}
	item, err := s.record(ctx, RecordRequest(KindExport, scope, ExportRecord{Type: PublicKindExport, RequestedBy: principal,
		Embeddings: embeddings}, s.MaxAttempts))
	if err != nil {
		return db.WorkItem{}, err
	}
	_, err = Exporter{Store: s.Store}.Export(ctx, scope, w, Options{Embeddings: embeddings, Schema: s.Schema})
	return item, err
}

// Import imports the stream r into the empty scope target and records it (a scope_import operation with the
// counts), in one transaction: the enqueue of the record, whose spec writes the scope (under the record lane's
// lock, before the journal head: lanes come before the head in the lock order, docs/protocol.md#lock-order). So
// there is never an imported scope without its record, nor a record of an import that did not commit.
func (s *Service) Import(ctx context.Context, r io.Reader, target, principal string) (ImportResult, db.WorkItem, error) {
	if err := sources.ValidateScope(target); err != nil {
		return ImportResult{}, db.WorkItem{}, err
	}
	var item db.WorkItem
	inTx := func(ctx context.Context, res ImportResult, fn func(context.Context, db.Queries) error) error {
		var err error
		item, err = s.record(ctx, RecordRequest(KindImport, target, ImportRecord{Type: PublicKindImport, RequestedBy: principal,
			SourceScopeID: res.SourceScopeID, Counts: res.Counts}, s.MaxAttempts).WithWrites(fn))
		return err
	}
	res, err := Importer{Store: s.Store}.Import(ctx, r, ImportOptions{AsScope: target, InTx: inTx})
	if err != nil {
		return res, db.WorkItem{}, err
	}
	return res, item, nil
}
