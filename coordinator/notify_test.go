package coordinator

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestItemWatchSignalsAndForgets(t *testing.T) {
	var w itemWatch
	a, stopA := w.watch("x")
	b, stopB := w.watch("x")
	require.Equal(t, 1, w.watching())
	w.notify("x")
	<-a
	<-b
	stopA()
	stopB()
	require.Zero(t, w.watching())

	_, stop := w.watch("y") // a waiter that gives up leaves nothing behind
	stop()
	stop()
	require.Zero(t, w.watching())
	w.notify("y") // nobody waits: no-op
}
