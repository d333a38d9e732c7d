package reliability

const (
	crashChildEnv = "AGCORE_RELIABILITY_CRASH_CHILD"
	loadServerEnv = "AGCORE_RELIABILITY_LOAD_SERVER"
)

func crashChild() {}
func loadServer() {}
