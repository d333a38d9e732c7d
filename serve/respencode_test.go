package serve_test

import (
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
)

// TestResponsesDeltasEncoded: the text and reasoning deltas, encoded by
// hand, are the JSON of their fields, strings that need escaping too, in
// a foreground stream and in a background turn's; the background turn's
// stream read again from its event log has the same bytes as the one its
// client got while it ran.
func TestResponsesDeltasEncoded(t *testing.T) {
	text := "a \"quote\", a \\ backslash,\nnew line\t<tag> & \u2028 \x01 é 😀"
	thought := "think <b>\r"
	for _, background := range []bool{false, true} {
		m := llmtest.New(llmtest.Reply(llm.Thinking{Text: thought}, llm.Text{Text: text}))
		e := newEnv(t, serve.Options{}, agentSpec{name: "m", model: m})
		evs := readEvents(t, e.do("POST", "/v1/responses", map[string]any{"model": "m", "input": "hi", "stream": true, "background": background}))
		var items []string
		var gotText, gotThought, id string
		for i, ev := range evs {
			f := jsonOf(t, ev.data)
			if f["type"] != ev.name || f["sequence_number"] != float64(i) {
				t.Fatalf("background %v: event %d: %s %s", background, i, ev.name, ev.data)
			}
			want := map[string]any{"type": ev.name, "sequence_number": float64(i)}
			switch ev.name {
			case "response.created":
				id = f["response"].(map[string]any)["id"].(string)
				continue
			case "response.output_item.added":
				items = append(items, f["item"].(map[string]any)["id"].(string))
				continue
			case "response.reasoning_summary_text.delta":
				want["item_id"], want["output_index"], want["summary_index"], want["delta"] = items[0], float64(0), float64(0), f["delta"]
				gotThought += f["delta"].(string)
			case "response.output_text.delta":
				want["item_id"], want["output_index"], want["content_index"], want["delta"], want["logprobs"] = items[1], float64(1), float64(0), f["delta"], []any{}
				gotText += f["delta"].(string)
			default:
				continue
			}
			if !reflect.DeepEqual(f, want) {
				t.Errorf("background %v: %s", background, ev.data)
			}
		}
		if gotText != text || gotThought != thought {
			t.Fatalf("background %v: text %q, thinking %q", background, gotText, gotThought)
		}
		if !background {
			continue
		}
		again := readEvents(t, e.do("GET", "/v1/responses/"+id+"?stream=true", nil))
		if len(again) != len(evs) {
			t.Fatalf("read again: %d events of %d", len(again), len(evs))
		}
		for i := range evs {
			if again[i] != evs[i] {
				t.Errorf("event %d read again: %s\nstreamed: %s", i, again[i].data, evs[i].data)
			}
		}
	}
}
