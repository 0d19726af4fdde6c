package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/lifecycle"
)

// addLifecycle registers the data lifecycle routes: skipping a failed window (docs/protocol.md#skip).
func (s *server) addLifecycle(e *echo.Echo) {
	s.add(e, http.MethodPost, "/v1/operations/:operation_id/skip", s.skipOperation)
}

// principalName names the caller in records an operator action leaves (a skip's note): the principal's name, or
// "anonymous" on a server without principals.
func principalName(c echo.Context) string {
	if p := principalOf(c); p != nil {
		return p.Name
	}
	return "anonymous"
}

// skipOperation is POST /v1/operations/{id}/skip: a failed window is skipped — its consumer's cursor moves past it
// without processing it, the operation succeeds with result code skipped and its lane moves on.
func (s *server) skipOperation(c echo.Context) error {
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
	fn, err := lifecycle.SkipFunc(item.Kind, principalName(c))
	if errors.Is(err, lifecycle.ErrNotSkippable) {
		return apiErr(http.StatusConflict, CodeOperationConflict, "only a memory_flush or experience_incubation window can be skipped",
			map[string]any{"operation_id": item.WorkID, "status": item.Status, "actual_version": item.StateVersion, "reason": "not_a_window"})
	}
	if err != nil {
		return err
	}
	done, err := s.d.Ledger.Skip(c.Request().Context(), item.WorkID, version, fn)
	var he *coordinator.HandlerError
	if errors.As(err, &he) { // the window's cursor is not where the window says: nothing to skip
		return apiErr(http.StatusConflict, CodeOperationConflict, "the window's cursor moved: nothing to skip",
			map[string]any{"operation_id": item.WorkID, "status": item.Status, "actual_version": item.StateVersion, "reason": he.Code})
	}
	if err != nil {
		return operationError(err)
	}
	rec, _ := operationRecord(done)
	return c.JSON(http.StatusOK, rec)
}
