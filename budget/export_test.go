package budget

// Worst and OutputCap are worstSpend and outputCap, for the external
// tests.
var (
	Worst     = worstSpend
	OutputCap = outputCap
)
