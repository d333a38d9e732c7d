package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
)

// What the plan does with agents that work together: a request offering
// transfer tools (an agent's handoffs, "transfer_to_NAME") is handed over
// once per turn, to the target whose name the user's message mentions
// (else the first offered); a request offering agent tools (tools whose
// only parameter is the string "input", as agent.AsTool makes them) calls
// each of them once, in parallel, with the user's message, and answers
// with what they returned.

const transferPrefix = "transfer_to_"

// multi returns the answer of the multi-agent part of the plan, or nil
// when it has nothing to do.
func multi(req *llm.Request, calls []*call, user string, ids *idMaker) *llm.Response {
	var transfers, agents []string
	for _, t := range req.Tools {
		switch {
		case strings.HasPrefix(t.Name, transferPrefix):
			transfers = append(transfers, t.Name)
		case isAgentTool(t):
			agents = append(agents, t.Name)
		}
	}
	transferred, asked := false, map[string]*call{}
	for _, c := range calls {
		if strings.HasPrefix(c.use.Name, transferPrefix) {
			transferred = true
		}
		asked[c.use.Name] = c
	}
	if len(transfers) > 0 && !transferred {
		to := pickTarget(transfers, user)
		return answer(
			llm.Text{Text: fmt.Sprintf("This is a question for the %s agent; I'm handing the conversation over.\n", strings.TrimPrefix(to, transferPrefix))},
			llm.ToolUse{ID: ids.next(), Name: to, Input: json.RawMessage(`{}`)},
		)
	}
	if len(agents) == 0 {
		return nil
	}
	var blocks []llm.Block
	for _, name := range agents {
		if asked[name] == nil {
			in, _ := json.Marshal(map[string]string{"input": user})
			blocks = append(blocks, llm.ToolUse{ID: ids.next(), Name: name, Input: in})
		}
	}
	if len(blocks) > 0 {
		return answer(append([]llm.Block{llm.Text{Text: fmt.Sprintf("I'll ask %s.\n", joinAnd(agents))}}, blocks...)...)
	}
	var b strings.Builder
	b.WriteString("Here is what my sub-agents answered:\n")
	for _, name := range agents {
		c := asked[name]
		if !c.done {
			continue
		}
		fmt.Fprintf(&b, "\n- **%s**: %s", name, strings.TrimSpace(c.result))
	}
	return answer(llm.Text{Text: b.String()})
}

// isAgentTool reports whether t takes one string, "input" (agent.AsTool's
// parameters).
func isAgentTool(t llm.ToolDefinition) bool {
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(t.Parameters, &schema) != nil || len(schema.Properties) != 1 {
		return false
	}
	p, ok := schema.Properties["input"]
	return ok && p.Type == "string"
}

// pickTarget returns the transfer tool whose agent the user's message
// names, else the first.
func pickTarget(transfers []string, user string) string {
	user = strings.ToLower(user)
	for _, t := range transfers {
		name := strings.TrimPrefix(t, transferPrefix)
		for _, w := range strings.Split(name, "_") {
			if len(w) > 2 && strings.Contains(user, w) {
				return t
			}
		}
	}
	return transfers[0]
}

// instructed is the answer to a request without the file tools: the
// demo can only say who it answers as.
func instructed(req *llm.Request, user string) *llm.Response {
	instr := ""
	if len(req.Messages) > 0 && req.Messages[0].Role == llm.RoleSystem {
		instr = firstSentence(req.Messages[0].Text())
	}
	if instr == "" {
		return nil
	}
	return answer(llm.Text{Text: fmt.Sprintf("I am agcore's scripted demo model, not a language model, answering under the instructions “%s” "+
		"My plan needs the read_file and list_dir tools, which this request does not offer, so this is my whole answer to “%s”.", instr, firstSentence(user))})
}

// firstSentence returns s up to its first sentence end or line break, at
// most 160 bytes.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 160 {
		s = strings.ToValidUTF8(s[:160], "") + "…"
	}
	return s
}

// userText returns the text of the request's last user message.
func userText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text()
		}
	}
	return ""
}

func (g *idMaker) next() string {
	g.n++
	return fmt.Sprintf("call_%d", g.n)
}
