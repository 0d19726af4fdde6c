package mysqlstore

import "database/sql"

// AsMySQL8 makes s run the statements it runs on MySQL 8: none of the MariaDB-only folds.
func AsMySQL8(s *Store) *Store {
	s.flavor.mariaDB = false
	return s
}

// TxDB is the pool of InTx's transactions.
func TxDB(s *Store) *sql.DB { return s.txDB }

// AsPerRowChains makes s run the set-based ledger methods as their per-row chains, as it does on OceanBase.
func AsPerRowChains(s *Store) *Store {
	s.flavor.perRow = true
	return s
}
