package migrate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/powercontext/powercontext/internal/clock"
	"slices"
	"strings"
	"time"

	"ariga.io/atlas/sql/migrate"

	"github.com/powercontext/powercontext/db"
)

// OperatorVersion is written to operator_version of the revisions this package applies (the Atlas CLI writes
// "Atlas CLI vX").
const OperatorVersion = "powercontext server migrate"

// Result is the outcome of Apply.
type Result struct {
	Engine db.Engine
	// Applied lists the migration files applied by this run, in order; empty when nothing was pending.
	Applied []string
	// Current is the latest fully applied version after the run ("" when none).
	Current string
	// Expected is the latest version embedded in the binary.
	Expected string
}

// NothingPending reports whether the database was already up to date.
func (r Result) NothingPending() bool { return len(r.Applied) == 0 }

// Option configures Apply, Status and Verify.
type Option func(*options)

type options struct {
	dir        migrate.Dir
	operator   string
	renewEvery time.Duration
}

// WithDir replaces the embedded migration directory (tests).
func WithDir(dir migrate.Dir) Option { return func(o *options) { o.dir = dir } }

// WithLeaseRenewal sets how often Apply renews the schema-migration lease while a file runs (default
// LeaseDuration/4; tests use less).
func WithLeaseRenewal(every time.Duration) Option { return func(o *options) { o.renewEvery = every } }

func buildOptions(engine db.Engine, opts []Option) (options, error) {
	o := options{operator: OperatorVersion, renewEvery: LeaseDuration / 4}
	for _, opt := range opts {
		opt(&o)
	}
	if !knownEngine(engine) {
		return o, fmt.Errorf("migrate: unknown engine %q", engine)
	}
	if o.dir == nil {
		d, err := Dir(engine)
		if err != nil {
			return o, err
		}
		o.dir = d
	}
	return o, nil
}

// Apply applies the pending migrations of engine to the database behind sqlDB (the migration account), recording
// each in atlas_schema_revisions, under the schema-migration lease taken through store as owner (a boot-unique id).
// See the package documentation for the invariants. A second run reports NothingPending.
func Apply(ctx context.Context, engine db.Engine, sqlDB *sql.DB, store db.Store, owner string, opts ...Option) (res Result, err error) {
	o, err := buildOptions(engine, opts)
	if err != nil {
		return Result{}, err
	}
	if owner == "" {
		return Result{}, errors.New("migrate: empty lease owner")
	}
	res.Engine = engine
	if err := Validate(o.dir); err != nil {
		return res, err
	}
	files, sum, err := dirFiles(o.dir)
	if err != nil {
		return res, err
	}
	if len(files) > 0 {
		res.Expected = files[len(files)-1].Version()
	}
	rr := revisions{engine: engine, operator: o.operator}
	if err := rr.createTable(ctx, sqlDB); err != nil {
		return res, err
	}

	var (
		held  bool  // whether this run holds the schema-migration lease
		fence int64 // the fence it holds
		renew bool  // whether the lease must be renewed before the next file
	)
	defer func() {
		if !held {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if rerr := releaseLease(rctx, store, owner, fence); rerr != nil && err == nil {
			err = rerr
		}
	}()
	for {
		revs, err := rr.read(ctx, sqlDB)
		if err != nil {
			return res, err
		}
		res.Current = currentVersion(revs)
		if !held && leaseTableExists(revs) {
			// Take the lease before deciding anything, then read the revisions again under it.
			if fence, err = acquireLease(ctx, store, owner); err != nil {
				return res, err
			}
			held = true
			continue
		}
		p, err := plan(files, sum, revs)
		if err != nil {
			return res, err
		}
		if len(p.unknown) > 0 && !all(p.unknown, IsExpand) {
			return res, &SchemaMismatchError{Engine: engine, Reason: SchemaAhead, Current: res.Current,
				Expected: res.Expected, Detail: "applied but unknown to this binary: " + strings.Join(p.unknown, ", ")}
		}
		if len(p.pending) == 0 {
			return res, nil
		}
		if held && renew {
			f, err := acquireLease(ctx, store, owner)
			if err != nil {
				return res, err
			}
			if f != fence {
				fence = f
				return res, errLeaseLost
			}
		}
		f := p.pending[0]
		hash, err := sum.SumByName(f.Name())
		if err != nil {
			return res, fmt.Errorf("migrate: %s is not in atlas.sum: %w", f.Name(), err)
		}
		apply := func(ctx context.Context) error { return applyFile(ctx, rr, sqlDB, f, hash, p.resume) }
		if held {
			err = whileRenewing(ctx, store, owner, fence, o.renewEvery, apply)
		} else {
			err = apply(ctx)
		}
		if err != nil {
			return res, err
		}
		res.Applied = append(res.Applied, f.Name())
		res.Current = f.Version()
		renew = true
	}
}

// applyFile runs the statements of f (from the first one not yet applied when resume is a partially applied
// revision of f) and records the revision. PostgreSQL and SQLite use one transaction for the file and its revision
// row unless the file says `-- atlas:txmode none`; MySQL, and such a file, record progress after every statement
// (MySQL's DDL commits implicitly; the file's statements commit on their own).
func applyFile(ctx context.Context, rr revisions, sqlDB *sql.DB, f migrate.File, hash string, resume *Revision) error {
	decls, err := f.StmtDecls()
	if err != nil {
		return fmt.Errorf("migrate: scan statements of %s: %w", f.Name(), err)
	}
	stmts := make([]string, len(decls))
	sums := make([]string, len(decls))
	h := sha256.New()
	for i, d := range decls {
		stmts[i] = d.Text
		h.Write([]byte(d.Text)) // cumulative, as the Atlas executor computes partial hashes
		sums[i] = "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	rev := &Revision{Version: f.Version(), Description: f.Desc(), Type: revisionTypeExecute, Total: len(stmts), Hash: hash}
	if resume != nil {
		for i := 0; i < resume.Applied; i++ {
			if i >= len(sums) || i >= len(resume.PartialHashes) || sums[i] != "h1:"+strings.TrimPrefix(resume.PartialHashes[i], "h1:") {
				return &HistoryChangedError{File: f.Name(), Statement: i + 1}
			}
		}
		rev.Applied = resume.Applied
		rev.executedAt = clock.Now()
		rev.PartialHashes = append([]string(nil), resume.PartialHashes[:resume.Applied]...)
	}

	ownTx, err := OwnTransaction(f)
	if err != nil {
		return err
	}
	if rr.engine != db.EngineMySQL && ownTx {
		tx, err := sqlDB.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: %s: begin: %w", f.Name(), err)
		}
		defer func() { _ = tx.Rollback() }()
		if resume == nil {
			err = rr.insert(ctx, tx, rev)
		} else {
			err = rr.update(ctx, tx, rev)
		}
		if err != nil {
			return err
		}
		for i := rev.Applied; i < len(stmts); i++ {
			if _, err := tx.ExecContext(ctx, stmts[i]); err != nil {
				return &StatementError{File: f.Name(), Statement: i + 1, Total: len(stmts), Text: stmts[i], Err: err}
			}
		}
		rev.Applied, rev.PartialHashes, rev.Error, rev.ErrorStmt = len(stmts), nil, "", ""
		if err := rr.update(ctx, tx, rev); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate: %s: commit: %w", f.Name(), err)
		}
		return nil
	}

	if resume == nil {
		if err := rr.insert(ctx, sqlDB, rev); err != nil {
			return err
		}
	}
	for i := rev.Applied; i < len(stmts); i++ {
		if _, err := sqlDB.ExecContext(ctx, stmts[i]); err != nil {
			serr := &StatementError{File: f.Name(), Statement: i + 1, Total: len(stmts), Text: stmts[i], Err: err, Partial: true}
			rev.Error, rev.ErrorStmt = err.Error(), stmts[i]
			// Record the failure even when ctx was cancelled: the database is dirty either way.
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if werr := rr.update(wctx, sqlDB, rev); werr != nil {
				return errors.Join(serr, werr)
			}
			return serr
		}
		rev.PartialHashes = append(rev.PartialHashes, sums[i])
		rev.Applied++
		rev.Error, rev.ErrorStmt = "", ""
		if i < len(stmts)-1 {
			if err := rr.update(ctx, sqlDB, rev); err != nil {
				return err
			}
		}
	}
	rev.PartialHashes = nil
	return rr.update(ctx, sqlDB, rev)
}

// planned is what plan decided.
type planned struct {
	pending []migrate.File // files to apply, in order
	resume  *Revision      // the partially applied revision of pending[0], if any
	unknown []string       // applied revisions without a file in this binary (the database is ahead)
}

// plan compares the directory with the applied revisions (ordered by version) like the Atlas executor in its
// default linear mode.
func plan(files []migrate.File, sum migrate.HashFile, revs []Revision) (planned, error) {
	var p planned
	byVersion := make(map[string]migrate.File, len(files))
	for _, f := range files {
		byVersion[f.Version()] = f
	}
	applied := make(map[string]bool, len(revs))
	for _, r := range revs {
		applied[r.Version] = true
		f, ok := byVersion[r.Version]
		if !ok {
			p.unknown = append(p.unknown, r.Name())
			continue
		}
		// A baseline or manually set revision carries no hash. A partially applied one is checked statement by
		// statement when it resumes (its failed statement may have been fixed, which changes the file hash).
		if r.Hash == "" || !r.Complete() {
			continue
		}
		if h, err := sum.SumByName(f.Name()); err == nil && h != r.Hash && !slices.Contains(commentOnlyRewrites[f.Name()], r.Hash) {
			return p, &HistoryChangedError{File: f.Name()}
		}
	}
	if len(revs) == 0 {
		p.pending = files
		return p, nil
	}
	first, last := revs[0], revs[len(revs)-1]
	var outOfOrder []string
	for _, f := range files {
		v := f.Version()
		switch {
		case v == last.Version && !last.Complete():
			r := last
			p.resume = &r
			p.pending = append(p.pending, f)
		case v > last.Version:
			p.pending = append(p.pending, f)
		case v >= first.Version && !applied[v]:
			outOfOrder = append(outOfOrder, f.Name())
		}
	}
	if len(outOfOrder) > 0 {
		return p, &NonLinearError{Files: outOfOrder, Latest: last.Version}
	}
	return p, nil
}

// dirFiles returns the migration files of dir (checkpoint files are not used by this project) and its sums.
func dirFiles(dir migrate.Dir) ([]migrate.File, migrate.HashFile, error) {
	files, err := dir.Files()
	if err != nil {
		return nil, nil, fmt.Errorf("migrate: read %s: %w", dirName(dir), err)
	}
	sum, err := dir.Checksum()
	if err != nil {
		return nil, nil, fmt.Errorf("migrate: hash %s: %w", dirName(dir), err)
	}
	for _, f := range files {
		if _, err := OwnTransaction(f); err != nil {
			return nil, nil, err
		}
	}
	return files, sum, nil
}

// TxModeDirective is the file directive (`-- atlas:txmode none` in the file's first comment block) that makes a
// PostgreSQL or SQLite file run statement by statement, as the Atlas CLI runs it: each statement commits on its own
// and the revision row records progress after each, as on MySQL. PostgreSQL needs it for CREATE INDEX CONCURRENTLY
// and DROP INDEX CONCURRENTLY, which refuse to run inside a transaction block (docs/deployment.md#reviewing-a-migration).
const TxModeDirective = "txmode"

// OwnTransaction reports whether f runs in one transaction of its own on PostgreSQL and SQLite (no txmode
// directive, or `file`) rather than statement by statement (`none`). Any other value is refused, before anything
// runs, so that a typo cannot silently change how a file is applied.
func OwnTransaction(f migrate.File) (bool, error) {
	lf, ok := f.(interface{ Directive(string) []string })
	if !ok {
		return true, nil
	}
	modes := lf.Directive(TxModeDirective)
	switch {
	case len(modes) == 0:
		return true, nil
	case len(modes) == 1 && modes[0] == "file":
		return true, nil
	case len(modes) == 1 && modes[0] == "none":
		return false, nil
	}
	return false, fmt.Errorf("migrate: %s: unsupported `-- atlas:%s %s` (use `none` to run the file statement by statement, "+
		"or no directive for one transaction)", f.Name(), TxModeDirective, strings.Join(modes, ", "))
}

// currentVersion is the latest fully applied version.
func currentVersion(revs []Revision) string {
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].Complete() {
			return revs[i].Version
		}
	}
	return ""
}

// leaseTableExists reports whether the migration creating pc_scheduler_leases is fully applied.
func leaseTableExists(revs []Revision) bool {
	for _, r := range revs {
		if r.Version >= leaseTableVersion && r.Complete() {
			return true
		}
	}
	return false
}

// StatusReport describes a database's schema revision relative to the binary.
type StatusReport struct {
	Engine db.Engine
	// Current is the latest fully applied version ("" when none).
	Current string
	// Expected is the latest version embedded in the binary.
	Expected string
	// Applied are the rows of atlas_schema_revisions, ordered by version.
	Applied []Revision
	// Pending are the migration files not applied yet.
	Pending []string
	// Unknown are applied revisions this binary has no file for (the database is ahead).
	Unknown []string
	// Dirty is the partially applied revision, if any (MySQL only: its DDL is not transactional).
	Dirty *Revision
	// Embedded are the binary's migration files, in version order.
	Embedded []string
}

// UpToDate reports whether the database is exactly at the binary's revision.
func (s StatusReport) UpToDate() bool {
	return len(s.Pending) == 0 && len(s.Unknown) == 0 && s.Dirty == nil
}

// Status reads the schema revision of the database behind sqlDB. It never writes. It fails with a *ChecksumError,
// *HistoryChangedError or *NonLinearError when the history cannot be compared.
func Status(ctx context.Context, engine db.Engine, sqlDB *sql.DB, opts ...Option) (StatusReport, error) {
	o, err := buildOptions(engine, opts)
	if err != nil {
		return StatusReport{}, err
	}
	rep := StatusReport{Engine: engine}
	if err := Validate(o.dir); err != nil {
		return rep, err
	}
	files, sum, err := dirFiles(o.dir)
	if err != nil {
		return rep, err
	}
	if len(files) > 0 {
		rep.Expected = files[len(files)-1].Version()
	}
	for _, f := range files {
		rep.Embedded = append(rep.Embedded, f.Name())
	}
	rr := revisions{engine: engine}
	exists, err := rr.tableExists(ctx, sqlDB)
	if err != nil {
		return rep, err
	}
	if exists {
		if rep.Applied, err = rr.read(ctx, sqlDB); err != nil {
			return rep, err
		}
	}
	rep.Current = currentVersion(rep.Applied)
	p, err := plan(files, sum, rep.Applied)
	if err != nil {
		return rep, err
	}
	for _, f := range p.pending {
		rep.Pending = append(rep.Pending, f.Name())
	}
	rep.Unknown = p.unknown
	rep.Dirty = p.resume
	return rep, nil
}

// Verify returns a *SchemaMismatchError unless the binary can run against the database behind sqlDB: it is at the
// binary's schema revision, or ahead of it only by expand-only migrations, or behind it only by contract migrations
// (see ExpandPrefix). Distributed roles call it at start instead of migrating, and again at every membership beat.
func Verify(ctx context.Context, engine db.Engine, sqlDB *sql.DB, opts ...Option) error {
	rep, err := Status(ctx, engine, sqlDB, opts...)
	mismatch := &SchemaMismatchError{Engine: engine, Current: rep.Current, Expected: rep.Expected}
	var (
		herr *HistoryChangedError
		nerr *NonLinearError
	)
	switch {
	case errors.As(err, &herr):
		mismatch.Reason, mismatch.Detail = SchemaEdited, herr.File
	case errors.As(err, &nerr):
		mismatch.Reason, mismatch.Detail = SchemaBehind, "out of order: "+strings.Join(nerr.Files, ", ")
	case err != nil:
		return err
	case rep.Dirty != nil:
		mismatch.Reason = SchemaDirty
		mismatch.Detail = fmt.Sprintf("%s applied %d of %d statements", rep.Dirty.Name(), rep.Dirty.Applied, rep.Dirty.Total)
	case rep.Compatibility() != CompatNone:
		return nil // exact, or ahead by expand-only / behind by contract-only migrations (README.md#rolling-upgrades)
	case len(rep.Unknown) > 0:
		mismatch.Reason, mismatch.Detail = SchemaAhead, "unknown to this binary and not all expand-only: "+strings.Join(rep.Unknown, ", ")
	case len(rep.Pending) > 0:
		mismatch.Reason, mismatch.Detail = SchemaBehind, "pending: "+strings.Join(rep.Pending, ", ")
	default:
		return nil
	}
	return mismatch
}

// MismatchReason says how a database's schema revision differs from the binary's.
type MismatchReason string

const (
	// SchemaBehind means migrations of this binary are not applied yet.
	SchemaBehind MismatchReason = "behind"
	// SchemaAhead means the database has migrations this binary does not know (a newer binary migrated it).
	SchemaAhead MismatchReason = "ahead"
	// SchemaDirty means a migration is partially applied (MySQL) after a failed statement.
	SchemaDirty MismatchReason = "dirty"
	// SchemaEdited means an applied migration differs from this binary's copy.
	SchemaEdited MismatchReason = "edited"
)

// SchemaMismatchError reports a database whose schema revision does not match the binary.
type SchemaMismatchError struct {
	Engine   db.Engine
	Reason   MismatchReason
	Current  string // latest fully applied version, "" when none
	Expected string // latest version embedded in the binary
	Detail   string
	// DatabaseURL is the redacted URL shown in the suggested command; callers that know it set it.
	DatabaseURL string
}

// Command is the command that brings the database to the binary's revision.
func (e *SchemaMismatchError) Command() string {
	u := e.DatabaseURL
	if u == "" {
		u = "URL"
	}
	return "powercontext server migrate --database-url " + u
}

func (e *SchemaMismatchError) Error() string {
	current := e.Current
	if current == "" {
		current = "none"
	}
	switch e.Reason {
	case SchemaAhead:
		return fmt.Sprintf("%s schema is ahead of this binary (database at %s, binary at %s; %s): deploy the binary "+
			"that migrated it or a newer one", e.Engine, current, e.Expected, e.Detail)
	case SchemaDirty:
		return fmt.Sprintf("%s schema is dirty (%s): fix the cause recorded in atlas_schema_revisions.error, then run "+
			"`%s` with the migration account", e.Engine, e.Detail, e.Command())
	case SchemaEdited:
		return fmt.Sprintf("%s schema history differs from this binary: applied migration %s was edited; restore it "+
			"and add a new migration instead", e.Engine, e.Detail)
	default:
		return fmt.Sprintf("%s schema is behind this binary (database at %s, binary needs %s; %s): run `%s` with "+
			"the migration account first", e.Engine, current, e.Expected, e.Detail, e.Command())
	}
}

// StatementError reports a failed migration statement.
type StatementError struct {
	File      string
	Statement int // 1-based
	Total     int
	Text      string
	// Partial is set on MySQL, where the statements before it stay applied and the revision is recorded dirty.
	Partial bool
	Err     error
}

func (e *StatementError) Error() string {
	text := strings.Join(strings.Fields(e.Text), " ")
	if len(text) > 120 {
		text = text[:120] + "…"
	}
	msg := fmt.Sprintf("migrate: %s: statement %d of %d failed (%s): %v", e.File, e.Statement, e.Total, text, e.Err)
	if e.Partial {
		return msg + fmt.Sprintf("; %d statements stay applied and the revision is recorded as dirty: fix the cause "+
			"and rerun, which resumes at statement %d", e.Statement-1, e.Statement)
	}
	return msg + "; the file was rolled back"
}

func (e *StatementError) Unwrap() error { return e.Err }

// commentOnlyRewrites lists, per migration file, the hashes of earlier copies that differ from the current one in
// comments only (reviewed; no statement changed). A database that applied such a copy has the same schema, so its
// revision is accepted instead of being reported as edited history. The baseline's comments once cited a document
// outside the repository; they now cite docs/protocol.md#lock-order (MySQL and PostgreSQL copies).
var commentOnlyRewrites = map[string][]string{
	"20261202000000_baseline.sql": {
		"h1:LrmqwLcGajPfSpL+nAkvyVHEY674rbvvWjfnMJyngmA=", // mysql, before the comment rewrite
		"h1:HZ4tdDW14zlF593S4lGEeY02PyEREjmRJOtOHcucK/A=", // postgres, before the comment rewrite
	},
}

// HistoryChangedError reports an applied migration whose content differs from the binary's copy.
type HistoryChangedError struct {
	File      string
	Statement int // 1-based statement of a partially applied file that changed; 0 when the whole-file hash differs
}

func (e *HistoryChangedError) Error() string {
	if e.Statement > 0 {
		return fmt.Sprintf("migrate: history changed: statement %d of the partially applied %s was edited; restore it", e.Statement, e.File)
	}
	return fmt.Sprintf("migrate: history changed: %s was edited after it was applied (its hash differs from the one "+
		"recorded in atlas_schema_revisions); restore it and add a new migration instead", e.File)
}

// NonLinearError reports migration files added with a version below the latest applied revision.
type NonLinearError struct {
	Files  []string
	Latest string
}

func (e *NonLinearError) Error() string {
	return fmt.Sprintf("migrate: %s added out of order (below the latest applied version %s); give new migrations a "+
		"later version", strings.Join(e.Files, ", "), e.Latest)
}
