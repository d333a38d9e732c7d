package main_test

import (
	"strings"
	"testing"
)

// TestReadCapFollowsMaxResultBytes: read_file's cap is --max-result-bytes
// (negative: no limit), not its own 64 KiB, so a large file reaches the
// model whole; by default it is cut.
func TestReadCapFollowsMaxResultBytes(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a line of a large file\n", 8000) + "END-OF-THE-FILE\n" // ~180 KiB
	for _, tc := range []struct {
		flags []string
		whole bool
	}{
		{[]string{"--max-result-bytes", "-1"}, true},
		{[]string{"--max-result-bytes", "300000"}, true},
		{nil, false},
	} {
		srv := newFake(t,
			openaiReply(turn{calls: []call{{"r1", "read_file", `{"path":"big.txt"}`}}}),
			openaiReply(turn{text: "Read."}),
		)
		c := newCLI(t).openai(srv, "sk-test")
		writeFiles(t, c.dir, map[string]string{"big.txt": big})
		c.ok(append([]string{"run", "--json", "--root", c.dir, "--tools", "read_file"}, append(tc.flags, "Read big.txt")...)...)
		sent := srv.messages(1)
		if got := strings.Contains(sent, "END-OF-THE-FILE"); got != tc.whole {
			t.Errorf("%v: the model read the whole file: %v (it read %d bytes of %d)", tc.flags, got, len(sent), len(big))
		}
	}
}
