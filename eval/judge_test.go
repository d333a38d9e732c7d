package eval_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llmtest"
)

// TestJudgeReplayed: the rubric is judged by a model whose verdict is
// structured output; the judgment is recorded, and a second run with no
// judge model at all replays it and scores the same.
func TestJudgeReplayed(t *testing.T) {
	dir := t.TempDir()
	judgeModel := llmtest.New(llmtest.Text(`{"items":[{"statement":1,"met":true,"reason":"It names the city."},{"statement":2,"met":false,"reason":"It gives no temperature."}]}`)).Verify(t)
	agentModel := func() *llmtest.Model { return llmtest.New(llmtest.Text("It is sunny in Paris.")) }
	set := &eval.Set{ID: "judged", Cases: []eval.Case{{ID: "weather", Turns: []eval.Turn{{Input: "Weather in Paris?", Expect: eval.Expect{
		Rubric: []string{"The answer names the city.", "The answer gives a temperature."},
	}}}}}}
	run := func(j *eval.Judge) eval.ScoreSummary {
		t.Helper()
		rep, err := eval.Run(t.Context(), newAgent(t, agentModel(), "", nil, nil), set, &eval.Options{Scorers: eval.Default(j)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Cases[0].Scores {
			if s.Scorer == eval.ScoreRubric {
				return s
			}
		}
		t.Fatalf("no rubric score: %+v", rep.Cases[0])
		return eval.ScoreSummary{}
	}
	live := run(&eval.Judge{Model: judgeModel, Records: dir, MinThreshold: 0.5})
	if live.Mean != 0.5 || !live.Pass {
		t.Fatalf("live judgment %+v", live)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "judge-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("recorded judgments: %v", files)
	}
	replayed := run(&eval.Judge{Records: dir, MinThreshold: 0.5})
	if replayed.Mean != live.Mean || replayed.Detail != live.Detail {
		t.Errorf("replayed %+v, live %+v", replayed, live)
	}
	if judgeModel.Calls() != 1 {
		t.Errorf("the judge model was asked %d times, want once", judgeModel.Calls())
	}
	// Without the record and without a model, the judgment fails, saying so.
	os.Remove(files[0])
	none := run(&eval.Judge{Records: dir})
	if none.Pass || none.Detail == "" {
		t.Errorf("no record, no model: %+v", none)
	}
}
