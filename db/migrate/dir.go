package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"

	"ariga.io/atlas/sql/migrate"

	"github.com/powercontext/powercontext/db"
	sqlfiles "github.com/powercontext/powercontext/sql"
)

// leaseTableVersion is the version of the migration that creates pc_scheduler_leases. Before it is applied the
// schema-migration lease cannot be taken.
const leaseTableVersion = "20261202000000"

var embeddedDirs sync.Map // db.Engine -> *migrate.MemDir

// Dir returns the migration directory of engine embedded in the binary (sql/migrations/<engine>), including its
// atlas.sum. The directory is not validated here; Apply and Validate do that.
func Dir(engine db.Engine) (migrate.Dir, error) {
	if d, ok := embeddedDirs.Load(engine); ok {
		return d.(*migrate.MemDir), nil
	}
	if !knownEngine(engine) {
		return nil, fmt.Errorf("migrate: unknown engine %q", engine)
	}
	sub, err := fs.Sub(sqlfiles.Migrations, path.Join("migrations", string(engine)))
	if err != nil {
		return nil, fmt.Errorf("migrate: embedded migrations of %s: %w", engine, err)
	}
	d, err := DirFS(sub)
	if err != nil {
		return nil, fmt.Errorf("migrate: embedded migrations of %s: %w", engine, err)
	}
	if d, err = throughCutoff(d, EmbeddedThrough); err != nil {
		return nil, fmt.Errorf("migrate: embedded migrations of %s through %s: %w", engine, EmbeddedThrough, err)
	}
	d.SetPath("sql/migrations/" + string(engine))
	actual, _ := embeddedDirs.LoadOrStore(engine, d)
	return actual.(*migrate.MemDir), nil
}

// DirFS copies the *.sql files and atlas.sum at the top of fsys into an in-memory Atlas directory.
func DirFS(fsys fs.FS) (*migrate.MemDir, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	d := &migrate.MemDir{}
	for _, e := range entries {
		if e.IsDir() || (path.Ext(e.Name()) != ".sql" && e.Name() != migrate.HashFileName) {
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if err := d.WriteFile(e.Name(), b); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Validate checks that dir matches its atlas.sum. On a mismatch it returns a *ChecksumError naming the file and
// what happened to it.
func Validate(dir migrate.Dir) error {
	err := migrate.Validate(dir)
	if err == nil {
		return nil
	}
	name := dirName(dir)
	var cerr *migrate.ChecksumError
	switch {
	case errors.As(err, &cerr):
		return &ChecksumError{Dir: name, File: cerr.File, Reason: cerr.Reason.String(), err: err}
	case errors.Is(err, migrate.ErrChecksumNotFound):
		return &ChecksumError{Dir: name, File: migrate.HashFileName, Reason: "missing", err: err}
	case errors.Is(err, migrate.ErrChecksumMismatch), errors.Is(err, migrate.ErrChecksumFormat):
		return &ChecksumError{Dir: name, File: migrate.HashFileName, Reason: "edited", err: err}
	default:
		return fmt.Errorf("migrate: validate %s: %w", name, err)
	}
}

// ChecksumError reports a migration directory that does not match its atlas.sum: a migration was edited, added or
// removed without `make migrate-hash`, or atlas.sum itself was edited.
type ChecksumError struct {
	Dir    string // the directory, e.g. sql/migrations/mysql
	File   string // the file that differs
	Reason string // edited | added | removed | missing
	err    error
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("migrate: %s does not match its atlas.sum: %s was %s; never edit a migration that may have "+
		"been applied (add a new one instead) and run `make migrate-hash` after adding one", e.Dir, e.File, e.Reason)
}

func (e *ChecksumError) Unwrap() error { return e.err }

func dirName(dir migrate.Dir) string {
	if p, ok := dir.(interface{ Path() string }); ok && p.Path() != "" {
		return p.Path()
	}
	return "the migration directory"
}

func knownEngine(e db.Engine) bool {
	switch e {
	case db.EnginePostgres, db.EngineMySQL, db.EngineSQLite:
		return true
	}
	return false
}

// fileName is the Atlas file name of a version and description.
func fileName(version, description string) string {
	if description == "" {
		return version + ".sql"
	}
	return version + "_" + description + ".sql"
}
