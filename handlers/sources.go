package handlers

import (
	"math"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/sources"
)

const (
	defaultSourceLimit = 100
	maxSourceLimit     = 500
	// sourceChunk is how many Sources one query reads: with Sources of up to 64 KiB, a page of 500 is read in
	// chunks so the rows held at once stay small however low the byte cap ends the page.
	sourceChunk = 32
)

func (s *server) captureSource(c echo.Context) error {
	if s.d.Journal == nil {
		return notReady("the source journal")
	}
	var req types.CaptureSourceRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"scope_id", req.ScopeID}, {"source_id", req.SourceID},
		{"source_type", req.SourceType}, {"content", req.Content}} {
		if err := checkText(f.name, f.v); err != nil {
			return err
		}
	}
	res, err := s.d.Journal.Capture(c.Request().Context(), sources.CaptureRequest{ScopeID: req.ScopeID,
		SourceID: req.SourceID, SourceType: req.SourceType, Content: req.Content, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, types.CaptureSourceResponse{ScopeID: res.ScopeID, SourceID: res.SourceID,
		JournalPosition: res.JournalPosition, Created: res.Created})
}

func (s *server) listSources(c echo.Context) error {
	if s.d.Journal == nil {
		return notReady("the source journal")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	after, err := queryInt(c, "after", 0, 0, math.MaxInt64)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", defaultSourceLimit, 1, maxSourceLimit)
	if err != nil {
		return err
	}
	p, more := s.newPage(), true
	for remaining := int(limit); remaining > 0 && more; {
		chunk := min(remaining, sourceChunk)
		rows, err := s.d.Journal.List(c.Request().Context(), scope, after, chunk)
		if err != nil {
			return err
		}
		more = len(rows) == chunk
		for _, r := range rows {
			kept, err := p.add(types.SourceRecord{ScopeID: r.ScopeID, SourceID: r.SourceID,
				JournalPosition: r.JournalPosition, SourceType: r.SourceType, Content: r.Content,
				Metadata: rawJSON(r.Metadata, "{}"), CreatedAt: apiTime(r.CreatedAt)})
			if err != nil {
				return err
			}
			if !kept { // the byte cap ends the page before r
				more, remaining = true, 0
				break
			}
			after = r.JournalPosition
			remaining--
		}
	}
	out := types.SourceList{Items: p.list()}
	if more && p.len() > 0 {
		out.NextAfter = &after
	}
	return c.JSON(http.StatusOK, out)
}
