package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/ui"
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
		if req.ContentLength > s.bodyLimit {
			return tooLarge()
		}
		if req.Body != nil && req.Body != http.NoBody {
			req.Body = http.MaxBytesReader(c.Response(), req.Body, s.bodyLimit)
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

func (s *server) authMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		path := c.Request().URL.Path
		if s.tokenHash == nil || exempt(path) || path == ui.LoginPath {
			return next(c)
		}
		given, ok := bearer(c.Request().Header.Get(echo.HeaderAuthorization))
		if !ok {
			// Browsers: the dashboard's cookie, on /ui pages and on its same-origin fetches (X-PowerContext-UI: 1).
			given, ok = ui.Credential(c.Request())
		}
		sum := sha256.Sum256([]byte(given))
		// Compare fixed-size digests in constant time: neither the token nor its length leaks through timing.
		if !ok || subtle.ConstantTimeCompare(sum[:], s.tokenHash) != 1 {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="powercontext"`)
			return apiErr(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid bearer token", nil)
		}
		return next(c)
	}
}

func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != ""
}

// principal is the rate-limit identity: the token's digest when a token is configured (the request is already
// authenticated), else the remote address (never a forwarded header, which a client could forge).
func (s *server) principal(c echo.Context) string {
	if s.tokenHash != nil {
		return "token:" + hex.EncodeToString(s.tokenHash)
	}
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		host = c.Request().RemoteAddr
	}
	return "ip:" + host
}

func (s *server) rateLimitMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if exempt(c.Request().URL.Path) {
			return next(c)
		}
		d, err := s.limiter.Allow(c.Request().Context(), s.principal(c), rateLimitPolicy, s.rateRequests, s.rateWindow)
		if err != nil {
			// Fail open: the limiter protects capacity, and the database the route needs is the same one; a
			// limiter outage must not turn into a full outage of reads.
			s.log.Warn().Str("request_id", requestID(c)).Str("error_type", fmt.Sprintf("%T", err)).Msg("rate limiter unavailable")
			return next(c)
		}
		if !d.Allowed {
			secs := int(math.Ceil(d.RetryAfter.Seconds()))
			if secs < 1 {
				secs = 1
			}
			c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
			return apiErr(http.StatusTooManyRequests, CodeRateLimited, "rate limit exceeded; retry later",
				map[string]any{"retry_after_seconds": secs})
		}
		return next(c)
	}
}
