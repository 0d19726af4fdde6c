package handlers

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
)

const (
	ctxRequestID = "powercontext.request_id"
	// HeaderRequestID is echoed or generated on every response.
	HeaderRequestID = "X-Request-ID"
	// rateLimitPolicy names the shared HTTP policy in pc_rate_limit_windows.
	rateLimitPolicy = "http"
	maxRequestIDLen = 128
)

// requestID returns the request id of c ("" before the middleware ran).
func requestID(c echo.Context) string {
	id, _ := c.Get(ctxRequestID).(string)
	return id
}

// saneRequestID accepts 1..128 characters of [A-Za-z0-9._:-].
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '.', b == '_', b == ':', b == '-':
		default:
			return false
		}
	}
	return true
}

func (s *server) requestIDMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(HeaderRequestID)
		if !saneRequestID(id) {
			id = uuid.NewString()
		}
		c.Set(ctxRequestID, id)
		c.Response().Header().Set(HeaderRequestID, id)
		return next(c)
	}
}

// routeOf returns the route template of c, or "unmatched" (never the raw path, which may carry ids).
func (s *server) routeOf(c echo.Context) string {
	if p := c.Path(); s.routes[p] {
		return p
	}
	return "unmatched"
}

// logMiddleware writes one line per request and commits errors through the error mapper so the logged status
// is the sent one.
func (s *server) logMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		var ev *zerolog.Event
		switch {
		case status >= 500:
			ev = s.log.Error()
		case status >= 400:
			ev = s.log.Warn()
		default:
			ev = s.log.Info()
		}
		ev.Str("request_id", requestID(c)).
			Str("route", s.routeOf(c)).
			Str("method", c.Request().Method).
			Int("status", status).
			Float64("latency_ms", float64(time.Since(start).Microseconds())/1000).
			Msg("http request")
		if s.observe != nil {
			s.observe(s.routeOf(c), c.Request().Method, status, time.Since(start))
		}
		return nil
	}
}

func (s *server) recoverMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.Error().Str("request_id", requestID(c)).Str("route", s.routeOf(c)).
				Str("panic_type", fmt.Sprintf("%T", r)).Bytes("stack", debug.Stack()).Msg("request panicked")
			err = apiErr(http.StatusInternalServerError, CodeInternal, "internal server error", nil)
		}()
		return next(c)
	}
}

// bodyLimitMiddleware refuses a declared body beyond the limit and caps a streamed one (the decoder maps the cap to
// 413).
func (s *server) bodyLimitMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		limit := s.bodyLimit
		if c.Path() == importPath && req.Method == http.MethodPost {
			limit = s.importLimit // an export stream (docs/portability.md)
		}
		if req.ContentLength > limit {
			return tooLarge()
		}
		if req.Body != nil && req.Body != http.NoBody {
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		}
		return next(c)
	}
}

func tooLarge() *APIError {
	return apiErr(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body is too large", nil)
}

// exempt reports whether a path needs neither auth nor rate limiting.
func exempt(path string) bool {
	return strings.HasPrefix(path, "/health/") || path == "/metrics"
}

// rateLimitMiddleware applies the shared (database) limit per principal (docs/protocol.md#rate-limit): a
// principal's own limit when it has one (even with the server-wide limit off), else the server-wide one; without
// any configured token, per client address. Anonymous requests to the dashboard's public paths are limited per
// address before authentication instead (authMiddleware).
func (s *server) rateLimitMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.limiter == nil || exempt(c.Request().URL.Path) {
			return next(c)
		}
		p := principalOf(c)
		key, limit, window := "", s.rateRequests, s.rateWindow
		switch {
		case p != nil && p.RateLimit != nil:
			key, limit, window = "principal:"+p.Name, p.RateLimit.Requests, p.RateLimit.Window
		case !s.rateEnabled:
			return next(c)
		case p != nil:
			key = "principal:" + p.Name
		case s.principals.Empty():
			key = "ip:" + clientAddress(c)
		default:
			return next(c) // anonymous public page: already limited per address
		}
		d, err := s.limiter.Allow(c.Request().Context(), key, rateLimitPolicy, limit, window)
		if err != nil {
			// Fail open: the limiter protects capacity, and the database the route needs is the same one; a
			// limiter outage must not turn into a full outage of reads.
			s.log.Warn().Str("request_id", requestID(c)).Str("error_type", fmt.Sprintf("%T", err)).Msg("rate limiter unavailable")
			return next(c)
		}
		if !d.Allowed {
			return rateLimited(c, d.RetryAfter)
		}
		return next(c)
	}
}
