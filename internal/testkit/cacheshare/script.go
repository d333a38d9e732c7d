package cacheshare

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The script: the same kind of session as [Run]'s, for tests that run it
// through a real agent (in process, or as separate processes of the built
// agcore against a fake provider) and measure the requests with a
// [Meter]. Each turn is deterministic on its own, so that any process can
// play any turn: the user's question ([Question]), one to three parallel
// read_file or grep calls ([Calls]) over the generated repository
// ([Files]: Go-like files of 2 to 4.5 KB), and the answer after the
// results ([Answer]).

// Call is one tool call of a scripted turn.
type Call struct {
	ID, Name string
	Args     json.RawMessage
}

// Question is the user's message of turn (1-based).
func Question(turn int) string { return question(turnRand(turn, 1), turn) }

// Answer is the model's answer that ends turn, after the tools' results.
func Answer(turn int) string { return answer(turnRand(turn, 2), turn) }

// Calls are the parallel tool calls the model makes in reply to turn's
// question: one to three, each read_file of a file of [Files] or grep of
// its indented lines (most of the file).
func Calls(turn int) []Call {
	r := turnRand(turn, 3)
	out := make([]Call, 1+r.IntN(3))
	for i := range out {
		path := paths[r.IntN(len(paths))]
		c := Call{ID: fmt.Sprintf("call_%03d_%d", turn, i), Name: "read_file"}
		args := map[string]string{"path": path}
		if r.IntN(3) == 0 {
			c.Name = "grep"
			args = map[string]string{"pattern": `^\t[a-z]`, "path": path}
		}
		c.Args, _ = json.Marshal(args)
		out[i] = c
	}
	return out
}

// Files is the repository the calls read: each path with Go-like source
// of 2 to 4.5 KB.
func Files() map[string]string {
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		out[p] = FileText(p)
	}
	return out
}

// FileText is the content of path in [Files].
func FileText(path string) string { return sourceText(path, 1800, 3900) }

// GrepText is what the scripted grep returns for path in an in-process
// agent: the indented lines of its file, each as "path:line: text".
func GrepText(path string) string {
	var sb strings.Builder
	for i, line := range strings.Split(FileText(path), "\n") {
		if len(line) > 1 && line[0] == '\t' && line[1] >= 'a' && line[1] <= 'z' {
			fmt.Fprintf(&sb, "%s:%d: %s\n", path, i+1, line)
		}
	}
	return sb.String()
}

func turnRand(turn int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(turn)*7919+17, stream))
}
