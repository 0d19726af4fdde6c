package migrate

import (
	"strconv"
	"strings"

	"ariga.io/atlas/sql/migrate"
)

// Compatibility markers (README.md#rolling-upgrades). A migration's label — the part of its file name after the
// version, which both `powercontext server migrate` and the Atlas CLI record as the revision's description in
// atlas_schema_revisions — says what a binary may assume about it:
//
//   - ExpandPrefix ("expand_…"): the migration only adds (tables, nullable or defaulted columns, indexes, wider
//     checks). A binary built before it keeps working with it applied, so a database that is ahead of a binary only
//     by expand migrations is accepted. The binary learns the marker from the database, since it has no copy of the
//     file.
//   - ContractPrefix ("contract_…"): the migration only removes what no binary since the previous release uses. The
//     binary that ships it does not depend on it, so a database that is behind the binary only by contract
//     migrations is accepted: the fleet rolls to that binary first, and the contract is applied afterwards.
//   - anything else: a binary runs only against exactly its own schema revision.
//
// TestExpandMigrationsOnlyAdd (db/storetest) holds every expand_ file of every engine to additive statements.
const (
	ExpandPrefix   = "expand_"
	ContractPrefix = "contract_"
)

// Compatibility says how a database's schema revision relates to the binary's.
type Compatibility string

const (
	// CompatExact means the database is at the binary's revision.
	CompatExact Compatibility = "exact"
	// CompatAhead means the database has applied migrations this binary does not know, every one of them expand-only.
	CompatAhead Compatibility = "ahead_expand_only"
	// CompatBehind means migrations of this binary are not applied yet, every one of them a contract.
	CompatBehind Compatibility = "behind_contract_only"
	// CompatNone means the binary cannot run against the database (Verify says why).
	CompatNone Compatibility = "incompatible"
)

// IsExpand reports whether a migration's name (version_label.sql) carries the expand marker.
func IsExpand(name string) bool { return strings.HasPrefix(labelOf(name), ExpandPrefix) }

// IsContract reports whether a migration's name carries the contract marker.
func IsContract(name string) bool { return strings.HasPrefix(labelOf(name), ContractPrefix) }

func labelOf(name string) string {
	_, label, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
	return label
}

func all(names []string, pred func(string) bool) bool {
	for _, n := range names {
		if !pred(n) {
			return false
		}
	}
	return true
}

// Compatibility classifies the report (see CompatExact and the others). A dirty database is incompatible.
func (s StatusReport) Compatibility() Compatibility {
	switch {
	case s.Dirty != nil:
		return CompatNone
	case len(s.Unknown) > 0 && len(s.Pending) > 0:
		return CompatNone
	case len(s.Unknown) > 0:
		if all(s.Unknown, IsExpand) {
			return CompatAhead
		}
		return CompatNone
	case len(s.Pending) > 0:
		if all(s.Pending, IsContract) {
			return CompatBehind
		}
		return CompatNone
	}
	return CompatExact
}

// SchemaRange is the range of schema versions the binary runs against, as a member advertises it
// (docs/protocol.md#membership): from the version of its last migration that is not a contract (it does not need
// its trailing contracts applied) to its latest migration — or, when the database is ahead by expand-only
// migrations, to the database's version. Versions are the numeric migration versions (YYYYMMDDHHMMSS).
func (s StatusReport) SchemaRange() (lo, hi int64) {
	hi = versionNumber(s.Expected)
	lo = hi
	for i := len(s.Embedded) - 1; i >= 0; i-- {
		if !IsContract(s.Embedded[i]) {
			lo = versionNumber(versionOfName(s.Embedded[i]))
			break
		}
	}
	if s.Compatibility() == CompatAhead {
		hi = max(hi, versionNumber(s.Current))
	}
	return lo, hi
}

func versionOfName(name string) string {
	v, _, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
	return v
}

// VersionNumber is the numeric version of a migration's name (version_label.sql), 0 when it has none.
func VersionNumber(name string) int64 { return versionNumber(versionOfName(name)) }

func versionNumber(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// throughCutoff keeps the files of dir up to EmbeddedThrough (when set) and rehashes, as the directory of a binary
// built at that version would be.
func throughCutoff(dir *migrate.MemDir, through string) (*migrate.MemDir, error) {
	if through == "" {
		return dir, nil
	}
	if err := Validate(dir); err != nil { // the whole directory first: a cut must not hide an edited file
		return nil, err
	}
	files, err := dir.Files()
	if err != nil {
		return nil, err
	}
	out := &migrate.MemDir{}
	for _, f := range files {
		if f.Version() > through {
			continue
		}
		if err := out.WriteFile(f.Name(), f.Bytes()); err != nil {
			return nil, err
		}
	}
	sum, err := out.Checksum()
	if err != nil {
		return nil, err
	}
	if err := migrate.WriteSumFile(out, sum); err != nil {
		return nil, err
	}
	return out, nil
}

// EmbeddedThrough is set at link time (-ldflags "-X github.com/powercontext/powercontext/db/migrate.EmbeddedThrough=VERSION")
// to make the binary embed only the migrations up to VERSION, as a build of an earlier release does. It exists to
// test rolling upgrades with two builds of one source tree (app/upgrade_test.go); release builds leave it empty.
var EmbeddedThrough string
