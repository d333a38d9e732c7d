package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// BenchmarkSubAgent measures what running a step as a sub-agent costs over
// running the same steps in one agent. Both variants make the same three
// model calls through provider/openai to a local server (the caller's
// call asking for the "research" tool, the research call, the caller's
// answer) and one tool call:
//
//   - the floor: the tool is a plain function that makes the research
//     model call itself;
//   - the sub-agent: the tool is agent.AsTool of an agent over the same
//     model, which runs its own loop (its pipeline, its updates forwarded
//     into the caller's stream, its usage rolled up).
//
// The two run in alternating blocks of turns within one benchmark, so a
// busy machine slows both alike; each reports its process CPU time per
// turn ("floor-cpu-ns/op", "sub-cpu-ns/op") and the sub-agent's over the
// floor's ("x-floor"). ns/op is one turn of either; B/op and allocs/op
// are one iteration's: a block of 16 turns of each. With session=yes the
// caller has a session in a memory store and the sub-agent's transcript is
// stored as a session of its own (one more append than the floor makes).
// Nothing here asserts a timing.
func BenchmarkSubAgent(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(researchServer))
	b.Cleanup(srv.Close)
	model := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithModel("gpt-4o"))
	const childInstructions = "You research one question and answer in one sentence."
	direct := tool.MustFunc("research", "Research a question.", func(ctx context.Context, in struct {
		Input string `json:"input"`
	}) (string, error) {
		resp, err := llm.Collect(model.Stream(ctx, &llm.Request{Messages: []llm.Message{llm.SystemText(childInstructions), llm.UserText(in.Input)}}))
		if err != nil {
			return "", err
		}
		return resp.Message.Text(), nil
	})
	child := newAgent(b, model, agent.Config{Name: "research", Instructions: childInstructions})
	for _, withSession := range []bool{false, true} {
		b.Run("session="+map[bool]string{false: "no", true: "yes"}[withSession], func(b *testing.B) {
			build := func(t tool.Tool) *agent.Agent {
				cfg := agent.Config{Name: "writer", Instructions: benchInstructions, Tools: []tool.Tool{t}}
				if withSession {
					cfg.Store = memstore.New()
				}
				return newAgent(b, model, cfg)
			}
			variants := [2]*agent.Agent{build(direct), build(agent.AsTool(child, nil))}
			msgs := []llm.Message{llm.UserText("When did Go 1.0 come out?")}
			var cpu [2]cpuMeter
			turns := [2]int{}
			const block = 16
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for k := range 2 {
					v := (k + i) % 2 // alternate which goes first
					cpu[v].start()
					for range block {
						opts := &agent.RunOptions{}
						if withSession {
							opts.SessionID = fmt.Sprintf("s%d", turns[v])
						}
						st := variants[v].RunStream(context.Background(), msgs, opts)
						for _, err := range st.Updates() {
							if err != nil {
								b.Fatal(err)
							}
						}
						resp, err := st.Wait()
						if err != nil || resp.Text() != "Go 1.0 came out in March 2012." {
							b.Fatalf("%v %q", err, resp.Text())
						}
						turns[v]++
					}
					cpu[v].stop()
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(turns[0]+turns[1]), "ns/op")
			if cpu[0].total > 0 && cpu[1].total > 0 {
				floor, sub := float64(cpu[0].total)/float64(turns[0]), float64(cpu[1].total)/float64(turns[1])
				b.ReportMetric(floor, "floor-cpu-ns/op")
				b.ReportMetric(sub, "sub-cpu-ns/op")
				b.ReportMetric(sub/floor, "x-floor")
			}
		})
	}
}

// researchServer answers Chat Completions requests: a request offering
// tools whose last message is the user's asks for the "research" tool; any
// other answers in text (the research call, then the caller's answer).
func researchServer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Tools []json.RawMessage `json:"tools"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	last := req.Messages[len(req.Messages)-1].Role
	switch {
	case len(req.Tools) > 0 && last == "user":
		io.WriteString(w, researchCallBody)
	case len(req.Tools) > 0:
		io.WriteString(w, strings.Replace(researchTextBody, "TEXT", "Go 1.0 came out in March 2012.", 1))
	default:
		io.WriteString(w, strings.Replace(researchTextBody, "TEXT", "March 28, 2012.", 1))
	}
}

const researchCallBody = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"research","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"input\":\"When was Go 1.0 released?\"}"}}]},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":12,"total_tokens":132}}

data: [DONE]

`

const researchTextBody = `data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"TEXT"},"finish_reason":null}]}

data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":150,"completion_tokens":9,"total_tokens":159}}

data: [DONE]

`
