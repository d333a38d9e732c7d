package sqlite

import "database/sql"

// WriterDB returns the store's writer: a pool of one connection, the one
// every Append commits on. Tests read its settings.
func WriterDB(s *Store) *sql.DB { return s.w }
