package memstore_test

import (
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sessiontest"
)

func TestRecordsContract(t *testing.T) {
	t.Parallel()
	sessiontest.RunRecords(t, func(*testing.T) session.Records { return memstore.New() })
}
