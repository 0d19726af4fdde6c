package db

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
)

// ConnectionLost reports whether err is a network-level failure of a database connection, in the terms the standard
// library gives every driver: a refused, reset or broken connection, an unexpected end of the stream, or a
// connection database/sql has given up on. Adapters use it (with their driver's own codes) to wrap such errors in
// ErrUnavailable.
func ConnectionLost(err error) bool {
	var op *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &op),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone):
		return true
	}
	return false
}
