//go:build linux

package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

// The history checker on hand-made histories (no fleet): a linearizable one is accepted, and each kind of violation
// the fleet's history could show is rejected, with the illegal scope named and its visualisation written. If the
// model or its wiring went blind, a case here fails.

var histT0 = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

// at is an interval [from, to] in milliseconds after histT0.
func at(op histOp, from, to int) histOp {
	op.Call, op.Return = histT0.Add(time.Duration(from)*time.Millisecond), histT0.Add(time.Duration(to)*time.Millisecond)
	return op
}

func capture(scope string, client int, pos int64) histOp {
	return histOp{Kind: hCapture, Scope: scope, Client: client, Pos: pos, Note: "src"}
}

func memCommit(scope string, after, through, gen, rev int64) histOp {
	return histOp{Kind: hMemoryCommit, Scope: scope, Client: clientMemoryCommits, After: after, Through: through, Gen: gen, Rev: rev}
}

func expCommit(scope string, after, through, gen int64) histOp {
	return histOp{Kind: hExperienceCommit, Scope: scope, Client: clientExperienceCommits, After: after, Through: through, Gen: gen}
}

func final(scope string, s scopeState) histOp {
	return histOp{Kind: hFinal, Scope: scope, Client: clientFinal, Final: s}
}

// goodScope is a linearizable history of one scope: three captures (two concurrent), a processed flush of (0,2]
// overlapping its commit (which may fall anywhere in the round, as the database's commits do), a revision read,
// a third capture, an operation read, the second window, an idle flush after it and the final state.
func goodScope(scope string) []histOp {
	return []histOp{
		at(capture(scope, 0, 1), 0, 10),
		at(capture(scope, 1, 2), 5, 20), // concurrent with position 1's capture, answered after it
		at(histOp{Kind: hFlushProcessed, Scope: scope, Client: 0, Prev: 0, Cur: 2, HW: 2, Rev: 1}, 30, 80),
		at(memCommit(scope, 0, 2, 0, 1), 0, 1000),
		at(expCommit(scope, 0, 3, 0), 0, 1000),
		at(histOp{Kind: hRevisionRead, Scope: scope, Client: 1, Rev: 1, Through: 2}, 85, 90),
		at(capture(scope, 1, 3), 100, 110),
		at(histOp{Kind: hOperationRead, Scope: scope, Client: 0, Cur: 2, Rev: 1}, 120, 130),
		at(memCommit(scope, 2, 3, 1, 2), 0, 1000),
		at(histOp{Kind: hFlushIdle, Scope: scope, Client: 0}, 200, 210),
		at(final(scope, scopeState{Head: 3, Cursor: 3, Gen: 2, Rev: 2, XCursor: 3, XGen: 1}), 1000, 1010),
	}
}

func TestHistoryCheckerAcceptsALinearizableHistory(t *testing.T) {
	ops := append(goodScope("a"), goodScope("b")...)
	v := checkHistory(ops, time.Minute, t.TempDir(), "good")
	require.NoError(t, v.Err)
	require.Equal(t, porcupine.Ok, v.Result, v.detail())
	require.Equal(t, 2, v.Scopes)
	require.Contains(t, v.line(), "history=linearizable")
	require.True(t, v.ok())

	// A history without observations or commits proves nothing: it is not ok even though porcupine accepts it.
	var blind []histOp
	for _, op := range ops {
		if op.Kind == hCapture || op.Kind == hFinal {
			blind = append(blind, op)
		}
	}
	// A flush that joined a window computed before a capture answered before the flush was sent: the answer is the
	// window (0,2] with the journal head read after it (3) as high watermark — current_cursor < high_watermark.
	joined := goodScope("c")
	for i, op := range joined {
		switch {
		case op.Kind == hCapture && op.Pos == 3:
			joined[i] = at(op, 22, 25)
		case op.Kind == hFlushProcessed:
			joined[i].HW = 3
		}
	}
	jv := checkHistory(joined, time.Minute, t.TempDir(), "joined")
	require.Equal(t, porcupine.Ok, jv.Result, jv.detail())

	bv := checkHistory(blind, time.Minute, t.TempDir(), "blind")
	require.Equal(t, porcupine.Illegal, bv.Result, "finals without the commits that made them")
	bv = checkHistory(goodScope("a")[:2], time.Minute, t.TempDir(), "captures only")
	require.Equal(t, porcupine.Ok, bv.Result)
	require.False(t, bv.ok(), "a history of captures only is blind")
	require.Contains(t, bv.detail(), "blind")
}

func TestHistoryCheckerRejectsBrokenHistories(t *testing.T) {
	cases := []struct {
		name   string
		broken func(ops []histOp) []histOp
	}{
		{"window committed twice", func(ops []histOp) []histOp {
			// A zombie's commit of (0,2] after the re-run committed it: the cursor had moved on.
			return append(ops, at(memCommit("b", 0, 2, 0, 2), 0, 1000))
		}},
		{"experience window committed twice", func(ops []histOp) []histOp {
			return append(ops, at(expCommit("b", 0, 3, 0), 0, 1000))
		}},
		{"revision numbers with a gap", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hMemoryCommit && op.Rev == 2 {
					ops[i].Rev = 3
				}
			}
			return ops
		}},
		{"windows committed out of cursor order", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hMemoryCommit && op.Rev == 2 {
					ops[i].After, ops[i].Gen = 0, 0 // the second window starts behind the cursor
				}
			}
			return ops
		}},
		{"a window beyond the journal", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hMemoryCommit && op.Rev == 2 {
					ops[i].Through = 4
				}
			}
			return ops
		}},
		{"flush answered idle missing an earlier capture", func(ops []histOp) []histOp {
			// Position 3 was acknowledged at 110 ms; an idle flush at 150 ms says nothing was pending, but the
			// window that holds it is committed only after the flush's answer (its commit is pinned after it, and
			// before the idle flush at 200 ms, which is right).
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hMemoryCommit && op.Rev == 2 {
					ops[i] = at(op, 170, 1000)
				}
			}
			return append(ops, at(histOp{Kind: hFlushIdle, Scope: "b", Client: 1}, 150, 160))
		}},
		{"flush answered processed with a high watermark below an earlier capture", func(ops []histOp) []histOp {
			// Position 3 acknowledged at 25 ms, before the flush was sent at 30 ms; the flush joined the window
			// (0,2] computed before it and answered that window's high watermark, 2: current_cursor =
			// high_watermark tells the client every Source it captured is in Memory, which is false.
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hCapture && op.Pos == 3 {
					ops[i] = at(op, 22, 25)
				}
			}
			return ops
		}},
		{"flush answered processed with a high watermark beyond the journal", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hFlushProcessed {
					ops[i].HW = 3 // position 3 is captured only at 100 ms, after the answer
				}
			}
			return ops
		}},
		{"flush answered processed before its window was committed", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hMemoryCommit && op.Rev == 1 {
					ops[i] = at(op, 81, 1000) // the answer (returned at 80 ms) came before the commit
				}
			}
			return ops
		}},
		{"operation read as succeeded before its commit", func(ops []histOp) []histOp {
			return append(ops, at(histOp{Kind: hOperationRead, Scope: "b", Client: 1, Cur: 3, Rev: 2}, 95, 99))
		}},
		{"revision read names the wrong window", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hRevisionRead {
					ops[i].Through = 3
				}
			}
			return ops
		}},
		{"journal positions against real time", func(ops []histOp) []histOp {
			// Position 3 acknowledged before position 2 was asked for.
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hCapture && op.Pos == 2 {
					ops[i] = at(op, 115, 118)
				}
			}
			return ops
		}},
		{"final state disagrees with the commits", func(ops []histOp) []histOp {
			for i, op := range ops {
				if op.Scope == "b" && op.Kind == hFinal {
					ops[i].Final.Cursor = 2 // the database lost the second window's cursor move
				}
			}
			return ops
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops := c.broken(append(goodScope("a"), goodScope("b")...))
			dir := t.TempDir()
			v := checkHistory(ops, time.Minute, dir, "broken "+c.name)
			require.NoError(t, v.Err)
			require.Equal(t, porcupine.Illegal, v.Result, "the checker accepted a broken history")
			require.Equal(t, []string{"b"}, v.Illegal, "only the broken scope is illegal")
			require.True(t, strings.HasPrefix(v.Path, dir), "visualisation %q under %s", v.Path, dir)
			html, err := os.ReadFile(v.Path)
			require.NoError(t, err)
			require.Contains(t, string(html), "<html")
			require.Contains(t, v.line(), "ILLEGAL")
			require.Contains(t, v.detail(), v.Path)
		})
	}
}
