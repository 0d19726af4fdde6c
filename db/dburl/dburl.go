// Package dburl parses the one database URL syntax of powercontext (docs/protocol.md#engines), which is also the syntax Atlas uses,
// into the engine and the native driver DSN the adapters open (each adapter translates its own scheme):
//
//	sqlite://PATH                                  file path, relative or absolute (sqlite:///abs/path.db)
//	postgres://user:pass@host:port/db?params       passed through to pgx (postgresql:// is accepted too)
//	mysql://user:pass@host:port/db?params          translated to go-sql-driver's user:pass@tcp(host:port)/db?params
//	oceanbase://…                                  an alias of mysql://
//
// Errors and URL.Redacted never contain the password.
package dburl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/mysqlstore"
	"github.com/powercontext/powercontext/db/postgresstore"
)

// DefaultURL is the embedded single_node database used when no URL is configured.
const DefaultURL = "sqlite://./data/powercontext.db"

// URL is a parsed database URL.
type URL struct {
	// Engine is the database engine the URL selects.
	Engine db.Engine
	// DSN is the native driver DSN: a pgx connection string (postgres), a go-sql-driver DSN (mysql), or a file
	// path (sqlite). It may contain the password: never log it.
	DSN string
	// Redacted is the URL with its password hidden, for messages and logs.
	Redacted string
}

// String returns the redacted URL, so that printing a URL never leaks its password.
func (u URL) String() string { return u.Redacted }

// Parse parses raw. It returns an error naming the problem (never the password) for an empty URL, an unknown
// scheme, or a URL missing a part its engine needs.
func Parse(raw string) (URL, error) {
	if strings.TrimSpace(raw) == "" {
		return URL{}, errors.New("database URL is empty (want sqlite://PATH, postgres://…, mysql://… or oceanbase://…)")
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return URL{}, errors.New("database URL has no scheme (want sqlite://PATH, postgres://…, mysql://… or oceanbase://…)")
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return parseSQLite(raw, rest)
	case "postgres", "postgresql":
		return parsePostgres(raw)
	case "mysql", "oceanbase":
		return parseMySQL(raw)
	default:
		return URL{}, fmt.Errorf("database URL scheme %q is not supported (want sqlite, postgres, postgresql, mysql or oceanbase)", scheme)
	}
}

func parseSQLite(raw, rest string) (URL, error) {
	path, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && query != "" {
		return URL{}, errors.New("sqlite database URL takes no query parameters (the service sets its own pragmas)")
	}
	if path == "" {
		return URL{}, errors.New("sqlite database URL has no file path (want sqlite://./data/powercontext.db or sqlite:///abs/path.db)")
	}
	return URL{Engine: db.EngineSQLite, DSN: path, Redacted: raw}, nil
}

func parsePostgres(raw string) (URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return URL{}, errors.New("postgres database URL is not a valid URL (check that special characters in the password are percent-encoded)")
	}
	dsn, err := postgresstore.DSNFromURL(raw)
	if err != nil {
		return URL{}, fmt.Errorf("postgres database URL: %w", err)
	}
	return URL{Engine: db.EnginePostgres, DSN: dsn, Redacted: redact(u)}, nil
}

func parseMySQL(raw string) (URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return URL{}, errors.New("mysql database URL is not a valid URL (check that special characters in the password are percent-encoded)")
	}
	redacted := redact(u)
	dsn, err := mysqlstore.DSNFromURL(u)
	if err != nil {
		return URL{}, fmt.Errorf("mysql database URL %s %w", redacted, err)
	}
	return URL{Engine: db.EngineMySQL, DSN: dsn, Redacted: redacted}, nil
}

// redact hides the password of the user info and of a "password" query parameter (pgx accepts one).
func redact(u *url.URL) string {
	c := *u
	if c.RawQuery != "" {
		q := c.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			c.RawQuery = q.Encode()
		}
	}
	return c.Redacted()
}
