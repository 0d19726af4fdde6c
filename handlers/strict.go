package handlers

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// headersMiddleware sets the headers every response carries, before anything can fail: nosniff (no browser ever
// guesses a JSON error or a Prometheus page into HTML or script).
func (s *server) headersMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		return next(c)
	}
}

// hostMiddleware accepts only loopback Host values when no credential is configured (docs/security.md#dns-rebinding):
// such a server trusts whoever can reach it, which is meant to be this machine only, and a page on another origin
// that rebinds its DNS name to 127.0.0.1 still sends its own name as Host. Probes and metrics are exempt.
func (s *server) hostMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if exempt(c.Request().URL.Path) || loopbackHost(c.Request().Host) {
			return next(c)
		}
		return apiErr(http.StatusForbidden, CodeHostNotAllowed,
			"this server has no auth token and answers only loopback Host names (localhost, 127.0.0.1, [::1])", nil)
	}
}

// loopbackHost reports whether a Host header names this machine: "localhost" or a loopback IP, with an optional
// port. Any other name could be an attacker's DNS name rebound to 127.0.0.1.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// strictQueryMiddleware refuses a query string that does not parse as application/x-www-form-urlencoded
// (invalid percent-encoding, ';' separators, names that are not UTF-8) with 422 and the offending parameter in
// details.field, instead of silently dropping the pair as url.Values does: a dropped scope_id filter would widen
// a list to every scope.
func (s *server) strictQueryMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if raw := c.Request().URL.RawQuery; raw != "" && !exempt(c.Request().URL.Path) {
			if field, msg, ok := checkQuery(raw); !ok {
				return invalidField(field, msg)
			}
		}
		return next(c)
	}
}

// checkQuery validates raw pair by pair, the way url.ParseQuery splits it. field is the parameter's name, or
// "query" when the name itself cannot be decoded.
func checkQuery(raw string) (field, msg string, ok bool) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		semi := strings.IndexByte(rawKey, ';') >= 0
		if semi {
			rawKey, _, _ = strings.Cut(rawKey, ";")
		}
		key, err := url.QueryUnescape(rawKey)
		if err != nil || key == "" || !utf8.ValidString(key) {
			return "query", "the query string has a parameter name that is empty or not valid percent-encoded UTF-8", false
		}
		if semi || strings.IndexByte(rawValue, ';') >= 0 {
			return key, "contains ';', which is not a query separator: separate parameters with '&' and encode ';' as %3B", false
		}
		if _, err := url.QueryUnescape(rawValue); err != nil {
			return key, "has invalid percent-encoding", false
		}
	}
	return "", "", true
}
