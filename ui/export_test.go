package ui

// SetCandidateScanMax lowers the candidate list's read bound for a test and returns the function that restores it.
// Only a test that does not call t.Parallel may use it (parallel tests resume after it has restored the bound).
func SetCandidateScanMax(n int) (restore func()) {
	old := candidateScanMax
	candidateScanMax = n
	return func() { candidateScanMax = old }
}
