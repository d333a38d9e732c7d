package compact

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/compact/internal/compacttest"
	"github.com/agcore/agcore/llm"
)

func call(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	for _, id := range ids {
		m.Content = append(m.Content, llm.ToolUse{ID: id, Name: "t", Input: json.RawMessage(`{}`)})
	}
	return m
}

func res(id string) llm.Message { return llm.ToolResultText(id, "ok "+id, false) }

func nested(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, id := range ids {
		m.Content = append(m.Content, llm.ToolResult{ToolUseID: id, Content: []llm.Block{llm.Text{Text: "ok " + id}}})
	}
	return m
}

var (
	sys  = llm.SystemText("sys")
	user = llm.UserText("hi")
	asst = llm.AssistantText("hello")
)

func problems(ps []Problem) string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprintf("%s@%d", p.Kind, p.Index))
	}
	return strings.Join(s, " ")
}

func TestCheckRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule string
		msgs []llm.Message
		want string
	}{
		{"empty conversation is valid", nil, ""},
		{"plain chat is valid", []llm.Message{sys, user, asst, user, asst}, ""},
		{"parallel calls answered in order are valid", []llm.Message{user, call("a", "b"), res("a"), res("b"), asst}, ""},
		{"nested results (Anthropic form) are valid", []llm.Message{user, call("a", "b"), nested("a", "b"), asst}, ""},
		{"a result without a call is an orphan", []llm.Message{user, res("x"), asst}, "orphan_result@1"},
		{"a result after a user message is an orphan", []llm.Message{user, call("a"), res("a"), user, res("a")}, "orphan_result@4"},
		{"a result for another message's call is an orphan", []llm.Message{user, call("a"), res("a"), asst, user, call("b"), res("a"), res("b")}, "orphan_result@6"},
		{"a second result for one call", []llm.Message{user, call("a"), res("a"), res("a"), asst}, "duplicate_result@3"},
		{"results out of call order", []llm.Message{user, call("a", "b"), res("b"), res("a"), asst}, "result_out_of_order@3"},
		{"a call without a result before the next user message", []llm.Message{user, call("a", "b"), res("a"), user}, "dangling_call@1"},
		{"a call without a result at the end", []llm.Message{user, call("a")}, "dangling_call@1"},
		{"repeated call id in one message", []llm.Message{user, call("a", "a"), res("a"), asst}, "duplicate_call_id@1"},
		{"empty call id", []llm.Message{user, call(""), user}, "empty_id@1"},
		{"a system message after the start", []llm.Message{user, sys, asst}, "system_not_first@1"},
		{"the first message is the assistant's", []llm.Message{sys, asst, user}, "first_not_user@1"},
		{"two assistant messages in a row", []llm.Message{user, asst, asst}, "consecutive_assistant@2"},
		{"an exchange after an assistant message", []llm.Message{user, asst, call("a"), res("a")}, "consecutive_assistant@2"},
		{"tool results are the user's side", []llm.Message{user, call("a"), res("a"), call("b"), res("b"), asst}, ""},
		{"problems are listed in message order", []llm.Message{user, call("a", "b"), res("z"), user, res("q")},
			"dangling_call@1 dangling_call@1 orphan_result@2 orphan_result@4"},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			if got := problems(Check(tc.msgs)); got != tc.want {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
			err := Validate(tc.msgs)
			if (err == nil) != (tc.want == "") {
				t.Fatalf("Validate = %v", err)
			}
			var ve *ValidationError
			if err != nil && (!errors.Is(err, ErrInvalidMessages) || !errors.As(err, &ve) || len(ve.Problems) == 0) {
				t.Errorf("Validate error %v is not a *ValidationError", err)
			}
		})
	}
}

func TestValidatePairingIgnoresOrderRules(t *testing.T) {
	t.Parallel()
	if err := ValidatePairing([]llm.Message{asst, asst, sys}); err != nil {
		t.Errorf("order rules reported: %v", err)
	}
	if err := ValidatePairing([]llm.Message{user, res("x")}); err == nil {
		t.Error("an orphan result passed")
	}
}

func TestValidationErrorNamesProblemsWithIndexes(t *testing.T) {
	t.Parallel()
	err := Validate([]llm.Message{user, call("a"), user})
	if err == nil || !strings.Contains(err.Error(), "message 1 block 0: dangling_call (a)") {
		t.Errorf("error = %v", err)
	}
}

func TestRepair(t *testing.T) {
	t.Parallel()
	interrupted := func(id string) llm.Message { return llm.ToolResultText(id, InterruptedResult, true) }
	tests := []struct {
		rule     string
		in, want []llm.Message
	}{
		{"a valid conversation comes back equal", []llm.Message{sys, user, call("a"), res("a"), asst}, []llm.Message{sys, user, call("a"), res("a"), asst}},
		{"orphan results are dropped", []llm.Message{user, res("x"), asst}, []llm.Message{user, asst}},
		{"a dangling call gets an interrupted error result", []llm.Message{user, call("a", "b"), res("a"), user},
			[]llm.Message{user, call("a", "b"), res("a"), interrupted("b"), user}},
		{"a crash right after the call", []llm.Message{user, call("a")}, []llm.Message{user, call("a"), interrupted("a")}},
		{"results are put in call order", []llm.Message{user, call("a", "b"), res("b"), res("a")}, []llm.Message{user, call("a", "b"), res("a"), res("b")}},
		{"duplicate results are dropped", []llm.Message{user, call("a"), res("a"), res("a")}, []llm.Message{user, call("a"), res("a")}},
		{"repeated call ids are dropped", []llm.Message{user, call("a", "a"), res("a")}, []llm.Message{user, call("a"), res("a")}},
		{"a message of only unusable calls goes, with its results", []llm.Message{user, call(""), res(""), asst}, []llm.Message{user, asst}},
		{"nested results become tool messages, other content follows",
			[]llm.Message{user, call("a"), {Role: llm.RoleUser, Content: []llm.Block{llm.Text{Text: "also"}, nested("a").Content[0]}}},
			[]llm.Message{user, call("a"), {Role: llm.RoleTool, ToolCallID: "a", Content: []llm.Block{llm.Text{Text: "ok a"}}}, llm.UserText("also")}},
		{"a nested orphan is removed from its message", []llm.Message{user, asst, {Role: llm.RoleUser, Content: []llm.Block{llm.Text{Text: "q"}, nested("z").Content[0]}}},
			[]llm.Message{user, asst, llm.UserText("q")}},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			before := deepCopy(tc.in)
			got, _ := Repair(tc.in)
			mustUnchanged(t, before, tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Repair =\n%v\nwant\n%v", got, tc.want)
			}
			if err := ValidatePairing(got); err != nil {
				t.Errorf("repaired conversation is invalid: %v", err)
			}
		})
	}
}

func TestRepairReportsWhatItFound(t *testing.T) {
	t.Parallel()
	_, probs := Repair([]llm.Message{user, call("a"), res("x")})
	if got := problems(probs); got != "dangling_call@1 orphan_result@2" {
		t.Errorf("problems = %q", got)
	}
}

// FuzzRepair decodes arbitrary bytes as a stored conversation (JSON Lines
// of messages) and checks that Repair always yields valid tool pairing,
// never changes its input, and is idempotent; and that Check never panics.
func FuzzRepair(f *testing.F) {
	seed := func(msgs ...llm.Message) {
		var sb strings.Builder
		for _, m := range msgs {
			b, _ := json.Marshal(m)
			sb.Write(b)
			sb.WriteByte('\n')
		}
		f.Add([]byte(sb.String()))
	}
	seed(user, call("a", "b"), res("b"), user, res("a"))
	seed(sys, user, call("a"), nested("a", "q"), asst, asst)
	seed(user, call(""), res(""), call("x", "x"))
	f.Add([]byte(`{"type":"assistant","content":[{"type":"tool_use","id":"1","name":"n","input":{}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []llm.Message
		for _, line := range strings.Split(string(data), "\n") {
			var m llm.Message
			if json.Unmarshal([]byte(line), &m) == nil {
				msgs = append(msgs, m)
			}
		}
		before := deepCopy(msgs)
		_ = Check(msgs)
		out, _ := Repair(msgs)
		mustUnchanged(t, before, msgs)
		if err := ValidatePairing(out); err != nil {
			t.Fatalf("Repair left invalid pairing: %v", err)
		}
		again, _ := Repair(out)
		if !reflect.DeepEqual(again, out) {
			t.Fatal("Repair is not idempotent")
		}
	})
}

// FuzzEstimate checks the estimator on arbitrary text: never negative,
// never wildly above the text's size, and within a broad factor of the
// exact count for text it was not calibrated on.
func FuzzEstimate(f *testing.F) {
	for _, c := range compacttest.Corpus {
		f.Add(compacttest.Text(c.File)[:200])
	}
	f.Add("\xff\xfe invalid utf-8 \xc3")
	f.Add("emoji 😀🎉 and ☃ symbols")
	f.Fuzz(func(t *testing.T, s string) {
		got := Estimator{}.CountText(s)
		if got < 0 || got > 2*len(s)+1 {
			t.Fatalf("estimate %d for %d bytes", got, len(s))
		}
		if len(s) == 0 && got != 0 {
			t.Fatal("empty text costs tokens")
		}
	})
}
