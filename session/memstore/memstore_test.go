package memstore_test

import (
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sessiontest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	sessiontest.Run(t, func(*testing.T) session.Store { return memstore.New() })
}

func BenchmarkStoreAppend(b *testing.B) {
	sessiontest.BenchAppend(b, func(*testing.B) session.Store { return memstore.New() })
}

func BenchmarkSessionLoad(b *testing.B) {
	sessiontest.BenchLoad(b, func(*testing.B) session.Store { return memstore.New() })
}

func BenchmarkList(b *testing.B) {
	sessiontest.BenchList(b, func(b *testing.B) session.Store { return memstore.New() })
}

func BenchmarkLoadView(b *testing.B) {
	sessiontest.BenchLoadView(b, func(b *testing.B) session.Store { return memstore.New() })
}
