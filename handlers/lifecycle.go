package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/sources"
)

// addLifecycle registers the data lifecycle routes: skipping a failed window (docs/protocol.md#skip), forgetting
// a Source and erasing a scope (docs/protocol.md#forgetting-and-erasing).
func (s *server) addLifecycle(e *echo.Echo) {
	s.add(e, http.MethodPost, "/v1/operations/:operation_id/skip", s.skipOperation)
	s.add(e, http.MethodDelete, "/v1/sources/:source_id", s.forgetSource)
	s.add(e, http.MethodDelete, "/v1/scopes/:scope_id", s.eraseScope)
}

// forgetSource is DELETE /v1/sources/{source_id}?scope_id=: the Source's content is erased at once (its row stays
// as a tombstone) and a memory_redact operation removes it from Memory.
func (s *server) forgetSource(c echo.Context) error {
	if s.d.Forgetter == nil {
		return notReady("the source journal")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	sourceID, err := pathParam(c, "source_id")
	if err != nil {
		return err
	}
	if err := checkText("source_id", sourceID); err != nil {
		return err
	}
	res, err := s.d.Forgetter.Forget(c.Request().Context(), scope, sourceID)
	if err != nil {
		return err
	}
	out := types.ForgetSourceResponse{ScopeID: res.ScopeID, SourceID: res.SourceID, JournalPosition: res.JournalPosition, Status: "forgotten"}
	if res.Redaction == nil {
		return c.JSON(http.StatusOK, out)
	}
	id, url := res.Redaction.WorkID, operationURL(res.Redaction.WorkID)
	out.OperationID, out.Status, out.StatusURL = &id, res.Redaction.Status, &url
	c.Response().Header().Set(echo.HeaderLocation, url)
	return c.JSON(http.StatusAccepted, out)
}

// eraseScope is DELETE /v1/scopes/{scope_id}: 202 with the scope_erase operation (a live one is joined).
func (s *server) eraseScope(c echo.Context) error {
	if s.d.Eraser == nil {
		return notReady("the operation ledger")
	}
	scope, err := pathParam(c, "scope_id")
	if err != nil {
		return err
	}
	if err := checkText("scope_id", scope); err != nil {
		return err
	}
	if err := sources.ValidateScope(scope); err != nil {
		return err
	}
	if p := principalOf(c); p.Restricted() {
		if err := scopeAllowed(p, scope); err != nil {
			return err
		}
	}
	item, err := s.d.Eraser.Erase(c.Request().Context(), scope, principalName(c))
	if err != nil {
		return err
	}
	url := operationURL(item.WorkID)
	c.Response().Header().Set(echo.HeaderLocation, url)
	return c.JSON(http.StatusAccepted, types.EraseScopeResponse{ScopeID: scope, OperationID: item.WorkID, Status: item.Status, StatusURL: url})
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

// pathParam is a path parameter decoded once: the router matches on the escaped path when the request has one (so
// an encoded "/" stays inside its segment) and then hands the parameter over still escaped.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", invalidField(name, "must be percent-encoded correctly")
	}
	return u, nil
}
