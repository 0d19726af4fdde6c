package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/opkinds"
	"github.com/powercontext/powercontext/sources"
)

const (
	defaultOperationLimit = 50
	maxOperationLimit     = 100
)

var validStatus = map[string]bool{db.StatusQueued: true, db.StatusRunning: true, db.StatusRetryWait: true,
	db.StatusCancelling: true, db.StatusSucceeded: true, db.StatusFailed: true, db.StatusCancelled: true}

// publicItem fetches a work item and hides internal kinds behind 404 operation_not_found.
func (s *server) publicItem(c echo.Context) (db.WorkItem, error) {
	item, err := s.d.Ledger.Get(c.Request().Context(), c.Param("operation_id"))
	if err != nil {
		return db.WorkItem{}, operationError(err)
	}
	if !visibleOperation(principalOf(c), item) {
		// Unknown kinds, system kinds for an agent, and other scopes' operations for a restricted token do not exist
		// for the caller.
		return db.WorkItem{}, operationNotFound()
	}
	return item, nil
}

func (s *server) getOperation(c echo.Context) error {
	if s.d.Ledger == nil {
		return notReady("the operation ledger")
	}
	item, err := s.publicItem(c)
	if err != nil {
		return err
	}
	rec, _ := operationRecord(item)
	return c.JSON(http.StatusOK, rec)
}

func (s *server) listOperations(c echo.Context) error {
	if s.d.Ledger == nil {
		return notReady("the operation ledger")
	}
	p := coordinator.ListParams{}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	if scope != "" {
		if err := sources.ValidateScope(scope); err != nil {
			return err
		}
		p.ScopeID = scope
	}
	kind, err := queryString(c, "kind")
	if err != nil {
		return err
	}
	switch internal, ok := opkinds.Ledger(kind); {
	case kind == "":
		p.Kinds = opkinds.LedgerKinds()
	case ok:
		p.Kinds = []string{internal}
	default:
		return invalidField("kind", "must be "+strings.Join(opkinds.PublicNames(), ", "))
	}
	status, err := queryString(c, "status")
	if err != nil {
		return err
	}
	if status != "" && !validStatus[status] {
		return invalidField("status", "must be one of queued, running, retry_wait, cancelling, succeeded, failed, cancelled")
	}
	p.Status = status
	who := principalOf(c)
	if who != nil && !who.Admin() { // system kinds are for admins: leave them out of the query
		p.Kinds = slices.DeleteFunc(p.Kinds, func(k string) bool { return opkinds.System(k) })
	}
	cursor, err := queryString(c, "cursor")
	if err != nil {
		return invalidField("cursor", "is malformed")
	}
	if cursor != "" {
		at, id, ok := s.opCursors.decode(who, cursor)
		if !ok {
			return invalidField("cursor", "is malformed")
		}
		p.BeforeCreatedAt, p.BeforeWorkID = at, id
	}
	limit, err := queryInt(c, "limit", defaultOperationLimit, 1, maxOperationLimit)
	if err != nil {
		return err
	}
	pg := s.newPage()
	var out types.OperationList
	if len(p.Kinds) > 0 {
		next, err := s.fillOperationPage(c, who, p, int(limit), pg)
		if err != nil {
			return err
		}
		out.NextCursor = next
	}
	out.Items = pg.list()
	return c.JSON(http.StatusOK, out)
}

// maxOperationListReads bounds the batches one GET /v1/operations page reads when the caller's scopes hide rows.
const maxOperationListReads = 8

// fillOperationPage fills pg with up to limit rows visible to who, read from p's position on, and returns the
// cursor of the next page (nil after the last row). Only visible rows count toward the page: hidden rows are
// skipped, batch after batch, until the page is full, the list ends, or maxOperationListReads batches were read;
// the cursor then continues after the last row examined, so it never tells where hidden rows lie.
func (s *server) fillOperationPage(c echo.Context, who *auth.Principal, p coordinator.ListParams, limit int,
	pg *page) (*string, error) {
	p.Limit = int32(limit) + 1 // one more tells whether a next page exists when every row is visible
	var last *db.WorkItem      // the last row examined
	cursorAfter := func(w *db.WorkItem) *string {
		next := s.opCursors.encode(who, w.CreatedAt, w.WorkID)
		return &next
	}
	for range maxOperationListReads {
		items, err := s.d.Ledger.List(c.Request().Context(), p)
		if err != nil {
			return nil, err
		}
		for i := range items {
			w := &items[i]
			if visibleOperation(who, *w) {
				rec, ok := operationRecord(*w)
				if ok {
					if pg.len() == limit { // the page is full and a next one exists: it starts at w
						return cursorAfter(last), nil
					}
					kept, err := pg.add(rec)
					if err != nil {
						return nil, err
					}
					if !kept { // the byte cap: the page ends before w
						return cursorAfter(last), nil
					}
				}
			}
			last = w
		}
		if len(items) < int(p.Limit) { // the list ends here
			return nil, nil
		}
		p.BeforeCreatedAt, p.BeforeWorkID = last.CreatedAt, last.WorkID
	}
	return cursorAfter(last), nil // the read budget is spent: continue after the last row examined
}

func (s *server) cancelOperation(c echo.Context) error { return s.operatorTransition(c, true) }
func (s *server) retryOperation(c echo.Context) error  { return s.operatorTransition(c, false) }

// operatorTransition cancels or retries a public operation with an expected state_version.
func (s *server) operatorTransition(c echo.Context, cancel bool) error {
	if s.d.Ledger == nil {
		return notReady("the operation ledger")
	}
	version, err := expectedVersion(c)
	if err != nil {
		return err
	}
	item, err := s.publicItem(c)
	if err != nil {
		return err
	}
	if cancel {
		item, err = s.d.Ledger.Cancel(c.Request().Context(), item.WorkID, version)
	} else {
		item, err = s.d.Ledger.Retry(c.Request().Context(), item.WorkID, version)
	}
	if err != nil {
		return operationError(err)
	}
	rec, _ := operationRecord(item)
	return c.JSON(http.StatusOK, rec)
}
