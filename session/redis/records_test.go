package redis_test

import (
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
)

func TestRecordsContract(t *testing.T) {
	serverURL(t)
	sessiontest.RunRecords(t, func(t *testing.T) session.Records { return open(t, newPrefix(t)) })
}
