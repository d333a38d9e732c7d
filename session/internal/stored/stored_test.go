package stored

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []Cursor{
		{Updated: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ID: "a.b-c_d"},
		{Updated: time.Unix(0, 0).UTC(), ID: "x"},
	} {
		got, err := ParseCursor(c.String())
		if err != nil || !got.Updated.Equal(c.Updated) || got.ID != c.ID {
			t.Errorf("ParseCursor(%v) = %v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"x", "!!", Cursor{ID: "../x"}.String(), "MTIzOg"} { // "123:"
		if _, err := ParseCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("ParseCursor(%q): err = %v, want ErrBadCursor", bad, err)
		}
	}
}

func TestParallelReportsTheFirstError(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	err := Parallel(10_000, 10, func(lo, hi int) error {
		switch {
		case lo == 0:
			return nil
		case hi == 10_000:
			return second
		default:
			return first
		}
	})
	if err == nil {
		t.Fatal("Parallel lost the error")
	}
	covered := make([]bool, 1001)
	Parallel(1001, 10, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			covered[i] = true
		}
		return nil
	})
	for i, c := range covered {
		if !c {
			t.Fatalf("index %d not covered", i)
		}
	}
}

func TestEncodeTurn(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	tr, err := EncodeTurn(context.Background(), session.Turn{
		ID:       "t",
		Messages: []llm.Message{llm.UserText("a")},
		State:    map[string]json.RawMessage{"b": nil, "a": nil, "s": json.RawMessage(" { \"x\" : 1 } ")},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Time.Equal(now) || tr.Time.Location() != time.UTC {
		t.Errorf("Time = %v, want %v in UTC", tr.Time, now)
	}
	if string(tr.Set["s"]) != `{"x":1}` || len(tr.Del) != 2 || tr.Del[0] != "a" || tr.Prefix != nil {
		t.Errorf("encoded turn = %+v", tr)
	}
	if _, err := EncodeTurn(context.Background(), session.Turn{ID: string(make([]byte, MaxTurnIDLen+1))}, now); !errors.Is(err, session.ErrInvalidID) {
		t.Errorf("overlong turn id: err = %v", err)
	}
}

// encodeSamples are messages whose storage JSON exercises what
// json.Marshal rewrites: HTML characters, U+2028/U+2029, invalid UTF-8,
// raw JSON with spaces, every role.
func encodeSamples(text, raw string) []llm.Message {
	input := json.RawMessage(raw)
	if !json.Valid(input) {
		input = json.RawMessage(`{ "q" : "<a href=\"x\">&</a>" }`)
	}
	return []llm.Message{
		llm.UserText(text),
		{Role: llm.RoleSystem, Content: []llm.Block{llm.Text{Text: text}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Thinking{Text: text, Signature: "sig<>&"},
			llm.Text{Text: text, Citations: []llm.Citation{{Title: text, URL: "https://x/?a=1&b=<2>"}}},
			llm.ToolUse{ID: "call_1", Name: "f", Input: input},
			llm.Extension{Kind: "x.y", Data: input},
			llm.RedactedThinking{Data: text},
		}},
		llm.ToolResultText("call_1", text, true),
		{Role: llm.RoleTool, ToolCallID: "call_2", Content: []llm.Block{
			llm.ToolResult{ToolUseID: "call_2", Content: []llm.Block{llm.Text{Text: text}, llm.Image{URL: "https://x/<y>.png"}}},
		}},
		{Role: llm.RoleUser, Content: []llm.Block{
			llm.Image{Data: []byte(text), MediaType: "image/png"},
			llm.File{Name: text, Data: []byte{0xff, 0}, MediaType: "application/pdf"},
			llm.Audio{URL: "https://x/&.mp3"},
		}},
		{Role: llm.RoleAssistant},
	}
}

// EncodeTurn stores exactly the bytes json.Marshal makes of each message.
func TestEncodeTurnBytes(t *testing.T) {
	for _, text := range []string{"plain", "<b>&amp;</b> \u2028 \u2029 \x00 \xff\xfe ☃ \"q\" \\", ""} {
		checkEncodeTurnBytes(t, text, `{"a": [1, 2.50, "<&>"], "b" : {"\u2028": null}}`)
	}
}

func FuzzEncodeTurnBytes(f *testing.F) {
	f.Add("<b>&</b>\u2028", `{"a" : "<>"}`)
	f.Add("\xff", `[1, 2]`)
	f.Fuzz(checkEncodeTurnBytes)
}

func checkEncodeTurnBytes(t *testing.T, text, raw string) {
	msgs := encodeSamples(text, raw)
	tr, err := EncodeTurn(context.Background(), session.Turn{ID: "t", Messages: msgs}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(tr.Messages[i]) != string(want) {
			t.Fatalf("message %d: EncodeTurn stored\n%s\njson.Marshal makes\n%s", i, tr.Messages[i], want)
		}
	}
}
