package filestore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
)

// oldLog writes session id as the releases before issue 22 did (format 1,
// unchanged up to commit 899c59a): a header without an owner, turn lines
// without model, title or compaction, and a summary file without a
// version.
func oldLog(t *testing.T, dir, id string, at time.Time, turns ...[]llm.Message) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"agcore_session":1,"id":%q,"created_at":%q}`+"\n", id, at.Format(time.RFC3339Nano))
	total := 0
	for i, msgs := range turns {
		data, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, `{"turn":"run-%d","time":%q,"messages":%s,"usage":{"input_tokens":100,"output_tokens":10},"cost_usd":0.01,"state":{"agcore":{"model":"old-model"}}}`+"\n",
			i, at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), data)
		total += len(msgs)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"size":%d,"created_at":%q,"updated_at":%q,"turns":%d,"messages":%d}`, b.Len(),
		at.Format(time.RFC3339Nano), at.Add(time.Duration(len(turns)-1)*time.Second).Format(time.RFC3339Nano), len(turns), total)
	if err := os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Logs the previous version wrote open, list with titles derived from
// their first prompt (their summary files rebuilt), load, and continue as
// the single-user owner's.
func TestPreviousVersionLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC)
	oldLog(t, dir, "first", base,
		[]llm.Message{llm.SystemText("be brief"), llm.UserText("\n  Plan a trip  to Lyon\nin May"), llm.AssistantText("Sure.")},
		sessiontest.Conversation("more", 4))
	oldLog(t, dir, "second", base.Add(time.Hour), sessiontest.Conversation("q", 4))
	s := open(t, dir)
	page, err := s.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 2 {
		t.Fatalf("List = %+v", page.Sessions)
	}
	second, first := page.Sessions[0], page.Sessions[1]
	if first.ID != "first" || first.Title != "Plan a trip to Lyon" || first.Owner != "" || first.Turns != 2 || first.Messages != 7 ||
		first.Usage != (llm.Usage{InputTokens: 200, OutputTokens: 20}) || first.CostUSD != 0.02 {
		t.Errorf("old session listed as %+v", first)
	}
	if second.ID != "second" || second.Title != "[q 0] What is the weather in city 0, and should I bring an umbrella tomorrow?" {
		t.Errorf("old session listed as %+v", second)
	}
	sess, err := s.Load(t.Context(), "first")
	if err != nil || len(sess.Messages) != 7 || sess.Title != "Plan a trip to Lyon" || string(sess.State["agcore"]) != `{"model":"old-model"}` {
		t.Fatalf("old session loaded as %+v, %v", sess, err)
	}
	if err := s.Append(t.Context(), "first", session.Turn{ID: "run-0", Messages: sessiontest.Conversation("dup", 2)}); err != nil {
		t.Fatal(err) // an old turn id: a no-op
	}
	if err := s.Append(t.Context(), "first", session.Turn{ID: "run-new", Model: "new-model",
		Messages: sessiontest.Conversation("new", 4), Compaction: &session.Compaction{Upto: 9, Messages: []llm.Message{llm.UserText("summary")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t.Context(), "first", session.Turn{ID: "other", Owner: "alice", Messages: sessiontest.Conversation("x", 1)}); !errors.Is(err, session.ErrOwner) {
		t.Fatalf("another owner's append to an old session: %v", err)
	}
	// A new store (another process) reads the continued log.
	view, err := open(t, dir).LoadView(t.Context(), "first")
	if err != nil || view.Base != 9 || len(view.Messages) != 2 || view.Turns != 3 || view.Model != "new-model" || view.Title != "Plan a trip to Lyon" {
		t.Fatalf("LoadView after continuing: %+v, %v", view, err)
	}
}
