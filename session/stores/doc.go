// Package stores registers every session store agcore has with
// session.Open, for programs that take a store URL from their users and
// want every kind to work: import it for its side effect,
//
//	import _ "github.com/agcore/agcore/session/stores"
//
// and session.Open then opens sqlite:PATH (session/sqlite), file:DIR
// (session/filestore), memory: (session/memstore), postgres:// and
// postgresql:// (session/postgres) and redis:// and rediss://
// (session/redis). A program that wants fewer drivers linked imports only
// the store packages it needs: each registers its own schemes.
//
// This package imports only the five store packages.
package stores

import (
	_ "github.com/agcore/agcore/session/filestore" // file:
	_ "github.com/agcore/agcore/session/memstore"  // memory:
	_ "github.com/agcore/agcore/session/postgres"  // postgres://, postgresql://
	_ "github.com/agcore/agcore/session/redis"     // redis://, rediss://
	_ "github.com/agcore/agcore/session/sqlite"    // sqlite:
)
