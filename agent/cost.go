package agent

import "github.com/agcore/agcore/llm"

// defaultCost prices nothing until the usage package's price table is wired
// in; a turn's cost is then reported as unknown, never as zero.
func defaultCost(string, llm.Usage) (float64, bool) { return 0, false }
