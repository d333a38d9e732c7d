package bench

// agcoreLibraries returns agcore's rows.
func agcoreLibraries() []Library {
	return nil
}
