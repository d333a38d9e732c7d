package eval_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/tool/fstool"
)

// ExampleRun scores one case: the agent must call get_weather for Paris
// (only the city compared) and answer with the temperature.
func ExampleRun() {
	weather := tool.MustFunc("get_weather", "the weather in a city", func(_ context.Context, in struct {
		City  string `json:"city"`
		Units string `json:"units,omitempty"`
	}) (string, error) {
		return "sunny, 21°C", nil
	})
	model := llmtest.New( // a scripted model; any llm.Model (a provider adapter) does
		llmtest.Reply(llmtest.Call("c1", "get_weather", `{"city":"Paris","units":"metric"}`)),
		llmtest.Text("It is sunny in Paris, 21°C."),
	)
	a, _ := agent.New(model, agent.Config{Name: "weather", Tools: []tool.Tool{weather}})

	set, err := eval.Parse([]byte(`{
	  "agcore_eval": 1,
	  "id": "weather",
	  "cases": [{
	    "id": "paris",
	    "turns": [{
	      "input": "Weather in Paris?",
	      "expect": {
	        "trajectory": {"calls": [{"name": "get_weather", "args": {"city": "Paris"}}], "args": "keys"},
	        "answer": {"regexp": "\\d+°C"},
	        "agent": "weather"
	      }
	    }]
	  }]
	}`), "weather.eval.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, _ := eval.Run(context.Background(), a, set, nil)
	for _, s := range rep.Cases[0].Scores {
		fmt.Printf("%s %.2f pass=%v\n", s.Scorer, s.Mean, s.Pass)
	}
	fmt.Println(rep.Passed, "of", len(rep.Cases), "passed")
	// Output:
	// tool_trajectory_avg_score 1.00 pass=true
	// answer 1.00 pass=true
	// agent 1.00 pass=true
	// 1 of 1 passed
}

// ExampleRouge1 is ADK's response_match_score of an answer against a
// reference: rouge-score's README example.
func ExampleRouge1() {
	p, r, f := eval.Rouge1("The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog")
	fmt.Printf("precision %.4f recall %.4f F %.4f\n", p, r, f)
	// Output: precision 0.7500 recall 0.6667 F 0.7059
}

// ExampleOffline runs a case made from a record with no model at all:
// eval.Offline answers its calls from the record.
func ExampleOffline() {
	set, err := eval.LoadRecord("../examples/eval/testdata/notes.record.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	root := "../examples/eval/testdata/notes"
	tools, _ := notesTools(root)
	a, _ := agent.New(eval.Offline(nil, llm.ModelInfo{}), agent.Config{Name: "agcore",
		Instructions: set.Cases[0].Record.Header.Instructions, Tools: tools})
	rep, _ := eval.Run(context.Background(), a, set, nil)
	c := rep.Cases[0]
	fmt.Printf("%s: pass=%v drifted=%v\n", c.ID, c.Pass, c.Drifted)
	for _, s := range c.Scores {
		fmt.Printf("%s %.2f\n", s.Scorer, s.Mean)
	}
	// Output:
	// notes: pass=true drifted=false
	// tool_trajectory_avg_score 1.00
	// response_match_score 1.00
	// no_drift 1.00
}

func notesTools(root string) ([]tool.Tool, error) {
	return fstool.ByName(root, []string{"list_dir", "read_file"}, fstool.Options{})
}
