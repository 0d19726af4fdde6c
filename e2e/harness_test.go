package e2e

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestFleetStartSurvivesALostPort: freePort's port can be taken by another process on the machine before the
// replica binds it (a CI run lost a skew round that way). The harness must retry on a fresh port instead of failing
// the round; the protocol under test is not involved, so a single-node process on SQLite is enough.
func TestFleetStartSurvivesALostPort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir, "powercontext")
	fl := newFleet(t, bin, dir, map[string]string{
		"POWERCONTEXT_DEPLOYMENT_MODE": "single_node",
		"POWERCONTEXT_DATABASE_URL":    "sqlite://" + filepath.Join(dir, "pc.db"),
	})
	p := fl.add("all", 1)[0]
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	taken := int32(squatter.Addr().(*net.TCPAddr).Port) //nolint:gosec // a TCP port fits in 16 bits
	p.port.Store(taken)
	if err := fl.start(p); err != nil {
		logged, _ := os.ReadFile(p.logPath) //nolint:gosec // the harness's own log file
		t.Fatalf("start with its port taken: %v\n%s", err, logged)
	}
	if p.port.Load() == taken {
		t.Fatalf("still on the taken port %d", taken)
	}
}

// TestPrivateServerStartSurvivesALostPort: the same for the private database server of the database round (initdb
// + postgres, mariadb-install-db + mariadbd): its first start on a port another process holds is retried on a fresh
// port. Skipped for an engine whose server binaries are not installed.
func TestPrivateServerStartSurvivesALostPort(t *testing.T) {
	if testing.Short() {
		t.Skip("initialises database servers")
	}
	for _, engine := range fleetEngines {
		t.Run(string(engine), func(t *testing.T) {
			squatter, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer squatter.Close()
			taken := squatter.Addr().(*net.TCPAddr).Port
			s := newDBServerOn(t, engine, taken)
			if s.port == taken {
				t.Fatalf("still on the taken port %d", taken)
			}
			if err := s.ownsPort(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFreePortNeverRepeats: freePort never hands out a port twice in one test process, even though each port is
// free again (closed) when the next is asked for.
func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		p := freePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
