package compact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

func ExampleCounterFor() {
	msgs := []llm.Message{
		llm.SystemText("You are a concise assistant."),
		llm.UserText("What is the capital of France?"),
	}
	for _, model := range []string{"gpt-4o", "claude-sonnet-4-5", "qwen2.5:7b"} {
		counter := compact.CounterFor(llm.ModelInfo{Name: model})
		fmt.Printf("%-18s %+v %d\n", model, counter, counter.CountMessages(msgs))
	}
	// Output:
	// gpt-4o             {Scale:0} 23
	// claude-sonnet-4-5  {Scale:1.2} 26
	// qwen2.5:7b         {Scale:0} 23
}

func ExampleRepair() {
	// A session stored by a process that crashed while running a tool.
	msgs := []llm.Message{
		llm.UserText("List the files"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "call_1", Name: "list_dir", Input: json.RawMessage(`{"path":"."}`)},
		}},
	}
	fmt.Println(compact.Validate(msgs))
	repaired, _ := compact.Repair(msgs)
	last := repaired[len(repaired)-1]
	fmt.Println(last.Role, last.ToolCallID, last.IsError, last.Text())
	fmt.Println(compact.Validate(repaired))
	// Output:
	// compact: 1 problem(s) in message sequence: message 1 block 0: dangling_call (call_1)
	// tool_result call_1 true interrupted: no result was recorded
	// <nil>
}

func ExampleMicrocompact() {
	msgs := []llm.Message{
		llm.UserText("Summarize main.go"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"main.go"}`)},
		}},
		llm.ToolResultText("c1", strings.Repeat("package main // a long file\n", 200), false),
		llm.AssistantText("It is a small program."),
		llm.UserText("Thanks. Anything else?"),
		llm.AssistantText("No."),
	}
	counter := compact.Estimator{}
	out, rep, err := compact.Microcompact{KeepRecent: 2, Step: 1, MinFree: 500}.CompressReport(
		context.Background(), msgs, 1000, counter)
	fmt.Println(err)
	fmt.Println(out[2].Text())
	fmt.Println(rep.TokensBefore, "->", rep.TokensAfter, "tokens; first changed message:", rep.KeptPrefix)
	// Output:
	// <nil>
	// [tool result cleared to save context: read_file returned 5.5 KB; call it again if it is needed]
	// 1453 -> 78 tokens; first changed message: 2
}

// A long tool-heavy session on a small context window: before every
// request the agent compresses its full history; no request goes over the
// budget, and most requests extend the previous one unchanged, so the
// provider's prompt cache keeps hitting. The turns that start a new prefix
// are printed.
func Example_longSession() {
	const budget = 4000
	counter := compact.Estimator{}
	// No summarizer here: microcompact, then truncation; Incremental keeps
	// extending the last compressed request while it fits.
	strategy := compact.NewIncremental(compact.DefaultPipeline(nil))
	history := []llm.Message{llm.SystemText("You are a coding agent.")}
	var prev []llm.Message
	requests, kept, largest := 0, 0, 0
	for turn := 1; turn <= 60; turn++ {
		id := fmt.Sprintf("call_%d", turn)
		history = append(history,
			llm.UserText(fmt.Sprintf("Step %d: look at file %d.", turn, turn)),
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.ToolUse{ID: id, Name: "read_file", Input: json.RawMessage(fmt.Sprintf(`{"path":"f%d.go"}`, turn))},
			}},
			llm.ToolResultText(id, strings.Repeat(fmt.Sprintf("line %d of the file\n", turn), 30), false),
		)
		req, rep, err := compact.Apply(context.Background(), strategy, history, budget, counter)
		if err != nil {
			fmt.Println(err)
			return
		}
		tokens := counter.CountMessages(req)
		requests++
		largest = max(largest, tokens)
		switch {
		case prev == nil: // the first request
		case len(prev) <= len(req) && reflect.DeepEqual(prev, req[:len(prev)]):
			kept++
		default:
			fmt.Printf("turn %2d: %3d of %3d messages, %4d tokens: new prefix from message %d (%s)\n",
				turn, len(req), len(history), tokens, rep.KeptPrefix, rep.Strategy)
		}
		prev = req
		history = append(history, llm.AssistantText(fmt.Sprintf("File %d looks fine.", turn)))
	}
	fmt.Printf("%d requests, %d extended the previous one, largest %d tokens (budget %d)\n", requests, kept, largest, budget)
	// Output:
	// turn 16:  64 of  64 messages, 1433 tokens: new prefix from message 3 (pipeline)
	// turn 27: 108 of 108 messages, 2159 tokens: new prefix from message 3 (pipeline)
	// turn 35: 140 of 140 messages, 2687 tokens: new prefix from message 3 (pipeline)
	// turn 41: 128 of 164 messages, 2489 tokens: new prefix from message 2 (pipeline)
	// turn 47: 152 of 188 messages, 2885 tokens: new prefix from message 2 (pipeline)
	// turn 52: 136 of 208 messages, 2621 tokens: new prefix from message 2 (pipeline)
	// turn 58: 124 of 232 messages, 2423 tokens: new prefix from message 2 (pipeline)
	// 60 requests, 52 extended the previous one, largest 3963 tokens (budget 4000)
}
