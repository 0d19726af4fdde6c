package db_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// TestDueOldestFirstRestSpread: Due keeps the expired heads in order and only the supported due heads, always puts
// the oldest due head first (every pass tries it), and spreads the others: over many passes, each of them leads the
// rest at some point, which a pass taking them in order would never do.
func TestDueOldestFirstRestSpread(t *testing.T) {
	p := db.WorkItemClaimManyParams{Supported: []db.KindVersions{{Kind: "k", Min: 1, Max: 1}}}
	var cands []db.ClaimCandidate
	for i := range 8 {
		cands = append(cands, db.ClaimCandidate{WorkID: fmt.Sprint("due-", i), Kind: "k", PayloadVersion: 1, Status: db.StatusQueued})
	}
	cands = append(cands[:3], append([]db.ClaimCandidate{
		{WorkID: "expired-0", Kind: "other", PayloadVersion: 9, Status: db.StatusRunning},
		{WorkID: "unsupported", Kind: "k", PayloadVersion: 2, Status: db.StatusQueued},
		{WorkID: "expired-1", Kind: "k", PayloadVersion: 1, Status: db.StatusCancelling},
	}, cands[3:]...)...)
	seconds := map[string]bool{}
	for range 200 {
		expired, due := p.Due(cands)
		require.Equal(t, []string{"expired-0", "expired-1"}, ids(expired), "expired heads in their order")
		require.Len(t, due, 8, "every supported due head, no other")
		require.Equal(t, "due-0", due[0].WorkID, "the oldest due head first")
		require.ElementsMatch(t, []string{"due-0", "due-1", "due-2", "due-3", "due-4", "due-5", "due-6", "due-7"}, ids(due))
		seconds[due[1].WorkID] = true
	}
	require.Len(t, seconds, 7, "each of the others comes second in some pass (200 passes: missing one has odds below 1e-13)")
}

func ids(cs []db.ClaimCandidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.WorkID
	}
	return out
}

// TestRoundsAscendAcrossAPass: a pass's rounds try lanes in ascending lane_key order across the whole pass, not only
// within a round (the global lock order), take up to n candidates in the order given (the oldest first), and leave
// only candidates above the round's last lane.
func TestRoundsAscendAcrossAPass(t *testing.T) {
	var rest []db.ClaimCandidate
	for _, k := range []string{"m", "c", "x", "a", "q", "e", "z", "n", "b"} {
		rest = append(rest, db.ClaimCandidate{WorkID: "w-" + k, LaneKey: k})
	}
	round, left := db.Round(rest, 3)
	require.Equal(t, []string{"w-c", "w-m", "w-x"}, ids(round), "the first three given, sorted by lane")
	require.Equal(t, []string{"w-z"}, ids(left), "only lanes above x stay")
	round, left = db.Round(left, 3)
	require.Equal(t, []string{"w-z"}, ids(round))
	require.Empty(t, left)
	round, left = db.Round(left, 3)
	require.Empty(t, round)
	require.Empty(t, left)

	round, left = db.Round(rest, 1)
	require.Equal(t, []string{"w-m"}, ids(round), "the first given comes first, whatever its lane")
	require.Equal(t, []string{"w-x", "w-q", "w-z", "w-n"}, ids(left), "in their order, above m")
}
