package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

// DefaultImportBodyLimit caps an import's body (Deps.ImportBodyLimit; docs/portability.md).
const DefaultImportBodyLimit int64 = 256 << 20

// DefaultImportsAtOnce is how many imports one process verifies at once (Deps.ImportsAtOnce): each may hold its
// whole body, parsed, in memory.
const DefaultImportsAtOnce = 2

// importRetryAfterSeconds is the Retry-After of a 429 too_many_imports: about what a large import takes.
const importRetryAfterSeconds = 10

// Error codes of a refused import (docs/portability.md#errors), the portability package's codes.
const (
	CodeImportTruncated         = "import_truncated"
	CodeImportChecksumMismatch  = "import_checksum_mismatch"
	CodeImportFormatUnsupported = "import_format_unsupported"
	CodeImportInvalidRecord     = "import_invalid_record"
	CodeImportIDCollision       = "import_id_collision"
	CodeScopeNotEmpty           = "scope_not_empty"
	CodeRedactionPending        = "redaction_pending"
)

const (
	exportPath = "/v1/scopes/:scope_id/export"
	importPath = "/v1/scopes/:scope_id/import"
)

// addPortability registers exporting and importing a scope (docs/portability.md).
func (s *server) addPortability(e *echo.Echo) {
	s.add(e, http.MethodGet, exportPath, s.exportScope)
	s.add(e, http.MethodPost, importPath, s.importScope)
}

// portabilityScope is the path's scope, which the caller must be allowed to move: a token whose scopes include it
// (an admin's scopes restrict it like any token's, docs/security.md#principals), an admin without scopes, or
// anyone on a server without principals; an agent token without scopes may not.
func portabilityScope(c echo.Context) (string, error) {
	scope, err := pathParam(c, "scope_id")
	if err != nil {
		return "", err
	}
	if err := checkText("scope_id", scope); err != nil {
		return "", err
	}
	if err := sources.ValidateScope(scope); err != nil {
		return "", err
	}
	p := principalOf(c)
	if p == nil || (p.Admin() && !p.Restricted()) {
		return scope, nil
	}
	if !p.Restricted() {
		return "", apiErr(http.StatusForbidden, CodeForbidden, "moving a scope needs the admin role or a token whose scopes include it",
			map[string]any{"required_role": auth.RoleAdmin, "scope_id": scope})
	}
	return scope, scopeAllowed(p, scope)
}

// streamWriter sends the export's headers with its first byte, so an error before it is still an error answer.
type streamWriter struct {
	c       echo.Context
	started bool
}

func (w *streamWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		h := w.c.Response().Header()
		h.Set(echo.HeaderContentType, "application/x-ndjson")
		h.Set("Content-Disposition", `attachment; filename="scope-export.jsonl"`)
		w.c.Response().WriteHeader(http.StatusOK)
	}
	return w.c.Response().Write(b)
}

// exportScope is GET /v1/scopes/{scope_id}/export[?embeddings=true]: the scope's export stream
// (application/x-ndjson), recorded as a scope_export operation. A scope that changes while it is read ends the
// stream without its trailer; one being erased is 409 scope_erasing, one with an unfinished redaction 409
// redaction_pending (docs/portability.md).
func (s *server) exportScope(c echo.Context) error {
	if s.d.Portability == nil {
		return notReady("the operation ledger")
	}
	scope, err := portabilityScope(c)
	if err != nil {
		return err
	}
	raw, err := queryString(c, "embeddings")
	if err != nil {
		return err
	}
	embeddings := false
	if raw != "" {
		if embeddings, err = strconv.ParseBool(raw); err != nil || (raw != "true" && raw != "false") {
			return invalidField("embeddings", "must be true or false")
		}
	}
	w := &streamWriter{c: c}
	item, err := s.d.Portability.Export(c.Request().Context(), scope, principalName(c), embeddings, w)
	if err != nil && w.started {
		// The answer is under way: the missing trailer tells the reader. The class only, never content.
		s.log.Warn().Str("error_class", errorClass(err)).Str("operation_id", item.WorkID).Str("request_id", requestID(c)).
			Msg("scope export ended early")
		return nil
	}
	if errors.Is(err, portability.ErrRedactionPending) {
		return apiErr(http.StatusConflict, CodeRedactionPending, "a memory_redact operation of the scope has not finished: "+
			"let the workers run it (retry it if it failed), then export again", nil)
	}
	if err != nil {
		return err // a scope being erased: 409 scope_erasing (errors.go)
	}
	if !w.started { // unreachable: a finished export always writes its header and trailer
		return c.NoContent(http.StatusOK)
	}
	return nil
}

// importScope is POST /v1/scopes/{scope_id}/import with an export stream as the body (application/x-ndjson, at most
// Deps.ImportBodyLimit bytes): 201 once the scope was written in one transaction; 409 scope_not_empty,
// scope_erasing or import_id_collision, 422 for a stream that is refused (its line in details.line), 413 beyond the
// limit, 429 too_many_imports when Deps.ImportsAtOnce imports are running in this process (refused before the body
// is read, so a burst of imports cannot hold a body each in memory). A refused import writes nothing.
func (s *server) importScope(c echo.Context) error {
	if s.d.Portability == nil {
		return notReady("the operation ledger")
	}
	scope, err := portabilityScope(c)
	if err != nil {
		return err
	}
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && ct != "application/x-ndjson" && ct != "application/jsonl" && ct != "application/octet-stream" {
		return apiErr(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "request body must be application/x-ndjson", nil)
	}
	select {
	case s.imports <- struct{}{}:
		defer func() { <-s.imports }()
	default:
		c.Response().Header().Set("Retry-After", strconv.Itoa(importRetryAfterSeconds))
		return apiErr(http.StatusTooManyRequests, CodeTooManyImports,
			"this server is verifying as many imports as it holds in memory at once; retry later",
			map[string]any{"retry_after_seconds": importRetryAfterSeconds})
	}
	res, item, err := s.d.Portability.Import(c.Request().Context(), c.Request().Body, scope, principalName(c))
	if err != nil {
		return importError(err)
	}
	url := operationURL(item.WorkID)
	n := res.Counts
	return c.JSON(http.StatusCreated, types.ImportScopeResponse{ScopeID: res.ScopeID, SourceScopeID: res.SourceScopeID,
		Counts: types.ImportCounts{Sources: n.Sources, Tombstones: n.Tombstones, Cursors: n.Cursors, Revisions: n.Revisions,
			Entries: n.Entries, Embeddings: n.Embeddings, Candidates: n.Candidates}, OperationID: item.WorkID, StatusURL: url})
}

func importError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge()
	}
	var pe *portability.Error
	if !errors.As(err, &pe) {
		return err
	}
	status := http.StatusUnprocessableEntity
	if pe.Code == portability.CodeScopeNotEmpty || pe.Code == portability.CodeIDCollision {
		status = http.StatusConflict
	}
	var details map[string]any
	if pe.Line > 0 {
		details = map[string]any{"line": pe.Line}
	}
	return apiErr(status, pe.Code, pe.Message, details)
}
