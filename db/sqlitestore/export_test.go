package sqlitestore

import (
	"database/sql"
	"time"
)

// BusyTimeoutMillis exposes busyTimeoutMillis to the external test package.
const BusyTimeoutMillis = busyTimeoutMillis

// Writer exposes the writer pool of s to the external test package.
func Writer(s *Store) *sql.DB { return s.writer }

// Reader exposes the reader pool of s to the external test package.
func Reader(s *Store) *sql.DB { return s.reader }

// BusyRetries reports how many BEGINs of s were refused as busy and asked again.
func BusyRetries(s *Store) int64 { return s.busyRetries.Load() }

// SetWriteLockWait sets how long InTx of s keeps asking for a busy write lock.
func SetWriteLockWait(s *Store, d time.Duration) { s.lockWait = d }
