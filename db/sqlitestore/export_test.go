package sqlitestore

import "database/sql"

// BusyTimeoutMillis exposes busyTimeoutMillis to the external test package.
const BusyTimeoutMillis = busyTimeoutMillis

// Writer exposes the writer pool of s to the external test package.
func Writer(s *Store) *sql.DB { return s.writer }

// Reader exposes the reader pool of s to the external test package.
func Reader(s *Store) *sql.DB { return s.reader }
