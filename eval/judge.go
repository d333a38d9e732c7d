package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/structured"
)

// Judge is the rubric scorer: an LLM reads the turn's input and final
// answer and says, for each statement of Expect.Rubric, whether the answer
// meets it (its verdict read as structured output); the value is the share
// met. With Records set, each judgment is recorded in that directory, one
// replay record per judgment (named by [Judge.Key]), and a judgment whose record exists is replayed from it: a
// rerun of the same answers asks no model, and runs with no key.
type Judge struct {
	// Model is the judge (any llm.Model: a provider from the registry);
	// nil replays recorded judgments only, and fails the others.
	Model llm.Model
	// Records is the directory of recorded judgments; "" records nothing.
	Records string
	// Instructions replace the judge's default instructions.
	Instructions string
	// MinThreshold is the rubric scorer's threshold; 0 means 1 (every
	// statement met).
	MinThreshold float64

	mu sync.Mutex // one recording per key at a time
}

// ErrNoJudgment is the detail of a judgment neither recorded nor
// askable (no Model).
var ErrNoJudgment = errors.New("eval: no recorded judgment and no judge model")

const judgeInstructions = `You grade an AI assistant's answer against a rubric. For each numbered rubric statement, decide whether the answer meets it, judging only from the user's message and the answer. Answer with one item per statement, in order, each with the statement's number, met true or false, and a one-sentence reason.`

// verdict is the judge's structured answer.
type verdict struct {
	Items []verdictItem `json:"items" jsonschema:"one item per rubric statement, in order"`
}

type verdictItem struct {
	Statement int    `json:"statement" jsonschema:"the statement's number, from 1"`
	Met       bool   `json:"met" jsonschema:"whether the answer meets the statement"`
	Reason    string `json:"reason" jsonschema:"one sentence"`
}

// Name is "rubric".
func (j *Judge) Name() string { return ScoreRubric }

// Threshold is MinThreshold, else 1.
func (j *Judge) Threshold() float64 {
	if j.MinThreshold > 0 {
		return j.MinThreshold
	}
	return 1
}

// Score asks (or replays) the judge.
func (j *Judge) Score(ctx context.Context, in *Input) (Score, bool) {
	if len(in.Expect.Rubric) == 0 {
		return Score{}, false
	}
	if in.Got.Error != "" {
		return Score{Detail: "the turn failed: " + in.Got.Error}, true
	}
	v, err := j.judge(ctx, in.Got.Input, in.Got.Answer, in.Expect.Rubric)
	if err != nil {
		return Score{Detail: "judge: " + err.Error()}, true
	}
	met := 0
	var why []string
	for i := range in.Expect.Rubric {
		var it *verdictItem
		for k := range v.Items {
			if v.Items[k].Statement == i+1 {
				it = &v.Items[k]
				break
			}
		}
		if it == nil && i < len(v.Items) {
			it = &v.Items[i]
		}
		switch {
		case it == nil:
			why = append(why, fmt.Sprintf("%q: no verdict", in.Expect.Rubric[i]))
		case it.Met:
			met++
		default:
			why = append(why, fmt.Sprintf("%q: %s", in.Expect.Rubric[i], it.Reason))
		}
	}
	return Score{Value: float64(met) / float64(len(in.Expect.Rubric)), Detail: strings.Join(why, "; ")}, true
}

// Key returns the name of the record of a judgment (without the
// directory): a hash of the judge's instructions, the input, the answer
// and the rubric (not the model: a rerun without one finds the record).
func (j *Judge) Key(input, answer string, rubric []string) string {
	h := sha256.New()
	for _, s := range append([]string{j.instructions(), input, answer}, rubric...) {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	return "judge-" + hex.EncodeToString(h.Sum(nil))[:20] + ".jsonl"
}

func (j *Judge) instructions() string {
	if j.Instructions != "" {
		return j.Instructions
	}
	return judgeInstructions
}

func (j *Judge) judge(ctx context.Context, input, answer string, rubric []string) (*verdict, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "The user's message:\n<user>\n%s\n</user>\n\nThe answer:\n<answer>\n%s\n</answer>\n\nThe rubric:\n", input, answer)
	for i, r := range rubric {
		fmt.Fprintf(&sb, "%d. %s\n", i+1, r)
	}
	msgs := []llm.Message{llm.UserText(sb.String())}
	var path string
	if j.Records != "" {
		path = filepath.Join(j.Records, j.Key(input, answer, rubric))
		if rec, err := replay.Load(path); err == nil {
			return j.ask(ctx, replay.NewModel(rec, replay.Options{}), nil, msgs, true)
		}
	}
	if j.Model == nil {
		return nil, ErrNoJudgment
	}
	if path == "" {
		return j.ask(ctx, j.Model, nil, msgs, false)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := os.MkdirAll(j.Records, 0o755); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	rec, err := replay.Create(tmp, replay.Header{Provider: j.Model.Info().Provider, Model: j.Model.Info().Name, Instructions: j.instructions()})
	if err != nil {
		return nil, err
	}
	rec.Turn("", msgs)
	v, err := j.ask(ctx, j.Model, rec.Middleware(), msgs, false)
	cerr := rec.Close()
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if cerr != nil {
		os.Remove(tmp)
		return nil, cerr
	}
	return v, os.Rename(tmp, path)
}

func (j *Judge) ask(ctx context.Context, model llm.Model, rec middleware.Middleware, msgs []llm.Message, replaying bool) (*verdict, error) {
	cfg := agent.Config{Name: "judge", Instructions: j.instructions()}
	if rec != nil {
		cfg.Middleware = []middleware.Middleware{rec}
	}
	if replaying {
		cfg.Retry = middleware.RetryConfig{MaxAttempts: 1}
	}
	a, err := agent.New(model, cfg)
	if err != nil {
		return nil, err
	}
	v, _, err := structured.Run[verdict](ctx, a, msgs, nil)
	if err != nil {
		return nil, err
	}
	return &v, nil
}
