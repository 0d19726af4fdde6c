package cli

// SetAfterInstall replaces the hook that runs once a skill folder is renamed into place, before the state file
// records it; the returned function restores it.
func SetAfterInstall(f func(name string) error) (restore func()) {
	old := afterInstall
	afterInstall = f
	return func() { afterInstall = old }
}
