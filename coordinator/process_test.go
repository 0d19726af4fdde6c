package coordinator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dbopen"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
)

// Child processes: the test binary re-executes itself with PC_CHILD set; TestChildProcess then plays the child.
const (
	envChild     = "PC_CHILD"
	envEngine    = "PC_CHILD_ENGINE"
	envDSN       = "PC_CHILD_DSN"
	envStartAt   = "PC_CHILD_START_UNIX_MS"
	envChildName = "PC_CHILD_NAME"
)

func TestChildProcess(t *testing.T) {
	mode := os.Getenv(envChild)
	if mode == "" {
		t.Skip("only runs as a child process")
	}
	ctx := context.Background()
	store, err := dbopen.Store(ctx, dburl.URL{Engine: db.Engine(os.Getenv(envEngine)), DSN: os.Getenv(envDSN)})
	if err != nil {
		fmt.Println("error open")
		os.Exit(3)
	}
	defer store.Close()
	l := coordinator.NewLedger(store)
	name := os.Getenv(envChildName)
	switch mode {
	case "claim":
		ms, _ := strconv.ParseInt(os.Getenv(envStartAt), 10, 64)
		time.Sleep(time.Until(time.UnixMilli(ms))) // real time: every child process starts claiming at the same instant
		claims := 0
		for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
			res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: name, Supported: supported, Slots: 1, Lease: time.Minute})
			if err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(4)
			}
			claims += len(res.Claims)
		}
		fmt.Printf("claims=%d\n", claims)
		os.Exit(0)
	case "scheduler":
		seq := 0
		disc := pageDiscoverer{name: "fenced", page: func(_ context.Context, _ string) ([]coordinator.EnqueueRequest, string, error) {
			seq++
			key := hash(fmt.Sprintf("%s/%d", name, seq))
			return []coordinator.EnqueueRequest{{LaneKey: hash("scheduler-writes"), Spec: func(ctx context.Context, q db.Queries) (*coordinator.EnqueueSpec, error) {
				// The lease row is locked by the assert that opened this transaction: record who held it, and its fence.
				lease, err := q.SchedulerLeaseGet(ctx, coordinator.LeaseWorkDiscovery)
				if err != nil {
					return nil, err
				}
				return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: name, LogicalKey: key,
					Payload: map[string]any{"owner": lease.OwnerID, "fence": lease.Fence}, MaxAttempts: 1}, nil
			}}}, "", nil
		}}
		s, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: name, Lease: time.Second, Renew: 300 * time.Millisecond,
			Logger: zerolog.Nop(), Hooks: coordinator.SchedulerHooks{Leadership: func(e string, fence int64) {
				fmt.Printf("leadership %s %d\n", e, fence)
			}}}, shortInterval{disc})
		if err != nil {
			os.Exit(5)
		}
		_ = s.Run(ctx) // until killed
	case "listening-worker":
		listeningWorkerChild(l, name) // until killed
	}
	os.Exit(0)
}

// shortInterval makes a discoverer due every 50 ms so each tick writes.
type shortInterval struct{ pageDiscoverer }

func (shortInterval) Interval() time.Duration { return 50 * time.Millisecond }

func childCmd(t *testing.T, mode, name string, u dburl.URL, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envEngine+"="+string(u.Engine), envDSN+"="+u.DSN, envChildName+"="+name)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestTwoProcessesClaimOneItemOnce races two OS processes on one item: exactly one claim in total.
func TestTwoProcessesClaimOneItemOnce(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		u := enginetest.MigratedDatabase(t, engine)
		s := enginetest.OpenStore(t, u)
		l := coordinator.NewLedger(s)
		res := enqueue(t, l, "race", "w1", 5)
		start := fmt.Sprintf("%s=%d", envStartAt, time.Now().Add(700*time.Millisecond).UnixMilli())
		var outs [2]string
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := childCmd(t, "claim", fmt.Sprintf("proc-%d", i), u, start).Output()
				require.NoError(t, err, string(out))
				outs[i] = string(out)
			}()
		}
		wg.Wait()
		total := 0
		for _, o := range outs {
			var n int
			for _, line := range strings.Split(o, "\n") {
				if strings.HasPrefix(line, "claims=") {
					n, _ = strconv.Atoi(strings.TrimPrefix(line, "claims="))
				}
			}
			total += n
		}
		require.Equal(t, 1, total, "exactly one claim across both processes: %q", outs)
		item, err := l.Get(context.Background(), res.Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, int64(1), item.LeaseFence)
		require.Equal(t, int32(1), item.AttemptCount)
	})
}

// TestTwoSchedulerProcessesOneLeader runs two scheduler processes: the lease row never shows a fence going
// backwards or two owners for one fence, every lease-asserted write carries a non-decreasing fence in write order,
// and killing the leader hands the lease over to the survivor.
func TestTwoSchedulerProcessesOneLeader(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		if engine == db.EngineSQLite {
			t.Skip("distributed scheduling runs on PostgreSQL and MySQL")
		}
		u := enginetest.MigratedDatabase(t, engine)
		s := enginetest.OpenStore(t, u)
		l := coordinator.NewLedger(s)
		ctx := context.Background()

		procs := map[string]*exec.Cmd{}
		fences := map[string]map[int64]bool{} // owner -> fences it reported acquiring
		var mu sync.Mutex
		for _, name := range []string{"sched-a", "sched-b"} {
			cmd := childCmd(t, "scheduler", name, u)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			procs[name] = cmd
			fences[name] = map[int64]bool{}
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					var event string
					var fence int64
					if _, err := fmt.Sscanf(sc.Text(), "leadership %s %d", &event, &fence); err == nil && event != coordinator.LeadershipLost {
						mu.Lock()
						fences[name][fence] = true
						mu.Unlock()
					}
				}
			}()
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		}

		ownerOfFence := map[int64]string{}
		var lastFence int64
		sample := func() db.SchedulerLease {
			lease, err := s.SchedulerLeaseGet(ctx, coordinator.LeaseWorkDiscovery)
			if err != nil {
				return db.SchedulerLease{}
			}
			require.GreaterOrEqual(t, lease.Fence, lastFence, "the fence only grows")
			lastFence = lease.Fence
			if lease.OwnerID != "" {
				if prev, ok := ownerOfFence[lease.Fence]; ok {
					require.Equal(t, prev, lease.OwnerID, "one owner per fence")
				}
				ownerOfFence[lease.Fence] = lease.OwnerID
			}
			return lease
		}
		// Real time is the point of the three sampling loops below: the leader must keep enqueueing for a while before
		// the kill, the handover is measured against the lease, and the survivor must keep its lease afterwards.
		var leader string
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(30 * time.Millisecond) {
			if l := sample(); l.OwnerID != "" {
				leader = l.OwnerID
			}
		}
		require.NotEmpty(t, leader)

		require.NoError(t, procs[leader].Process.Signal(syscall.SIGKILL))
		killed := time.Now()
		// The survivor takes over once the dead leader's lease has expired. How soon is not asserted (it depends on
		// the machine's load; the lease and renew settings bound it in production): the 30 s are a deadline for
		// the handover to happen at all.
		var handover time.Duration
		for time.Since(killed) < 30*time.Second {
			if l := sample(); l.OwnerID != "" && l.OwnerID != leader {
				handover = time.Since(killed)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		require.NotZero(t, handover, "no new leader after killing %s", leader)
		t.Logf("handover after %s", handover.Round(time.Millisecond))
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(30 * time.Millisecond) {
			sample()
		}

		// Every lease-asserted write, in lane (write) order, was made by the lease holder of that moment, with a
		// fence that never decreases and that its writer reported acquiring.
		items := listAll(t, l)
		require.NotEmpty(t, items)
		sortBySequence(items)
		mu.Lock()
		defer mu.Unlock()
		var prevFence int64
		switches, owners := 0, map[string]bool{}
		for i, it := range items {
			var p struct {
				Owner string `json:"owner"`
				Fence int64  `json:"fence"`
			}
			require.NoError(t, json.Unmarshal(it.Payload, &p))
			require.Equal(t, it.ScopeID, p.Owner, "a write by a process that did not hold the lease")
			require.GreaterOrEqual(t, p.Fence, prevFence, "fences never go backwards in write order")
			require.True(t, fences[p.Owner][p.Fence], "%s wrote under fence %d it never acquired", p.Owner, p.Fence)
			if i > 0 && p.Fence != prevFence {
				switches++
			}
			prevFence = p.Fence
			owners[p.Owner] = true
		}
		require.Len(t, owners, 2, "both processes led at some point")
		lease, err := s.SchedulerLeaseGet(ctx, coordinator.LeaseWorkDiscovery)
		require.NoError(t, err)
		t.Logf("%s: %d fenced writes, %d leadership changes, final fence %d, handover %s", engine, len(items), switches, lease.Fence, handover.Round(time.Millisecond))
	})
}

func sortBySequence(items []db.WorkItem) {
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].LaneSequence < items[j-1].LaneSequence; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
}
