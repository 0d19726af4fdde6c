package mysqlstore

import (
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// defaultPort is used when a mysql:// or oceanbase:// URL names no port.
const defaultPort = "3306"

// DSNFromURL translates a parsed mysql:// (or oceanbase://) database URL, mysql://user:pass@host:port/db?params,
// into go-sql-driver's user:pass@tcp(host:port)/db?params. The driver parses the query parameters (parseTime, tls,
// timeout, system variables, …), so an invalid one fails here with the meaning it has in a native DSN. Its errors
// never contain the password.
func DSNFromURL(u *url.URL) (string, error) {
	if u.Hostname() == "" {
		return "", errors.New("has no host (want mysql://user:pass@host:port/db)")
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	if dbName == "" || strings.Contains(dbName, "/") {
		return "", errors.New("must name exactly one database (want mysql://user:pass@host:port/db)")
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	cfg, err := mysql.ParseDSN("tcp(" + net.JoinHostPort(u.Hostname(), port) + ")/?" + u.RawQuery)
	if err != nil {
		return "", errors.New("has invalid query parameters: " + err.Error())
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = dbName
	return cfg.FormatDSN(), nil
}

// URLFromDSN is the mysql:// database URL of a go-sql-driver DSN naming database dbName (test support: the test
// servers are configured by DSN).
func URLFromDSN(dsn, dbName string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + dbName}
	if cfg.Passwd != "" {
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	} else if cfg.User != "" {
		u.User = url.User(cfg.User)
	}
	if _, query, ok := strings.Cut(dsn, "?"); ok {
		u.RawQuery = query
	}
	return u.String(), nil
}
