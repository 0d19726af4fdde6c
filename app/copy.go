package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

func newCopyCommand() *cobra.Command {
	var from, to, output string
	cmd := &cobra.Command{
		Use:   "copy --from URL --to URL",
		Short: "Copy every scope of one deployment's database into another, empty one (any engines)",
		Long: `Copy every scope of the database at --from into the database at --to, engine to engine (docs/portability.md#copying-a-deployment):
each scope is exported (vectors included) and imported under its own id in one transaction, then exported again
from the target and compared with the source record by record (counts and a SHA-256 per scope). The target must be
migrated to this binary's schema ("server migrate") and hold no scope. The operation ledger (operations, lanes,
rate limits, sessions, members) and the skills (revisions, targets, publications) are not copied: the target's
packaging discoverer builds each skill again from its approved candidates; register the targets again. A scope
being erased (its scope_erase operation queued, running or failed) is skipped and listed; a scope with an
unfinished memory_redact operation fails the copy before anything is written (run the source's workers until it
has finished). Stop the source deployment's writers first: a scope that changes while it is read fails the copy.
Exits 1 on any mismatch.

Database URLs: sqlite://PATH, postgres://user:pass@host:port/db?sslmode=disable, mysql://user:pass@host:port/db.`,
		Example: `  powercontext server copy --from sqlite:///var/lib/powercontext/pc.db --to postgres://pc@db:5432/pc`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return &ConfigError{Err: errors.New("--from and --to are required")}
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			rep, err := runCopy(cmd.Context(), from, to)
			if output == "json" {
				if werr := writeJSON(cmd.OutOrStdout(), rep); werr != nil {
					return werr
				}
			} else {
				for _, s := range rep.Scopes {
					if _, werr := fmt.Fprintf(cmd.OutOrStdout(), "copied scope %s: %d sources, %d tombstones, %d revisions, %d entries, %d candidates (sha256 %s)\n",
						s.ScopeID, s.Counts.Sources, s.Counts.Tombstones, s.Counts.Revisions, s.Counts.Entries, s.Counts.Candidates, s.SHA256); werr != nil {
						return werr
					}
				}
				for _, s := range rep.Skipped {
					if _, werr := fmt.Fprintf(cmd.OutOrStdout(), "skipped scope %s: %s\n", s.ScopeID, s.Reason); werr != nil {
						return werr
					}
				}
				if err == nil {
					skipped := ""
					if len(rep.Skipped) > 0 {
						skipped = fmt.Sprintf("; %d skipped (listed above)", len(rep.Skipped))
					}
					if _, werr := fmt.Fprintf(cmd.OutOrStdout(), "copied %d scopes from %s to %s; every scope verified%s\nnot copied: %s\n",
						len(rep.Scopes), rep.From, rep.To, skipped, rep.NotCopied); werr != nil {
						return werr
					}
				}
			}
			return err
		},
	}
	// Defaults none: both URLs are named explicitly, so a copy never runs against the wrong database by default.
	cmd.Flags().StringVar(&from, "from", "", "database URL to copy from (required)")
	cmd.Flags().StringVar(&to, "to", "", "database URL to copy into: migrated and without scopes (required)")
	addOutputFlag(cmd, &output)
	return cmd
}

// CopyReport is what `server copy` did: per scope, the counts and the SHA-256 of its records (header and trailer
// apart), equal on both sides; the scopes it skipped, and why; and what no copy carries.
type CopyReport struct {
	From    string        `json:"from"`
	To      string        `json:"to"`
	Scopes  []CopyScope   `json:"scopes"`
	Skipped []SkippedCopy `json:"skipped"`
	// NotCopied says what a copy never carries (notCopied).
	NotCopied string `json:"not_copied"`
	Error     string `json:"error,omitempty"`
}

// notCopied is what no copy carries, and what becomes of it in the target (docs/portability.md#format).
const notCopied = "the operation ledger (operations, lanes, rate limits, sessions, members) and the skills (revisions, " +
	"targets, publications); the target's packaging discoverer builds each skill again from its approved candidates, " +
	"and every skill target must be registered, enrolled and published to again"

// SkippedCopy is a scope of the source that was not copied, and why.
type SkippedCopy struct {
	ScopeID string `json:"scope_id"`
	Reason  string `json:"reason"`
}

// skipErasing is the reason a scope being erased is not copied: the erase would remove it, a copy would keep it live.
const skipErasing = "being erased (its scope_erase operation is queued, running or failed); not copied — cancel the erase to keep and copy it"

// CopyScope is one copied scope.
type CopyScope struct {
	ScopeID string             `json:"scope_id"`
	Counts  portability.Counts `json:"counts"`
	SHA256  string             `json:"sha256"`
}

// copyPage bounds one page of the scope listing.
const copyPage = 500

// noCursor names no consumer: listing the journal heads "pending" for it lists every scope with a Source.
const noCursor = "powercontext:server-copy"

// listScopes returns every scope of store that has a Source, in byte order.
func listScopes(ctx context.Context, store db.Store, limit int32) ([]string, error) {
	var out []string
	after := ""
	for {
		heads, err := store.SourceJournalHeadListPending(ctx, db.SourceJournalHeadListPendingParams{CursorName: noCursor, AfterScopeID: after, Limit: copyPage})
		if err != nil {
			return nil, err
		}
		for _, h := range heads {
			out = append(out, h.ScopeID)
			if limit > 0 && int32(len(out)) >= limit {
				return out, nil
			}
		}
		if len(heads) < copyPage {
			return out, nil
		}
		after = heads[len(heads)-1].ScopeID
	}
}

// recordsDigest is the SHA-256 of an export's records without its header (which names the time and binary) and
// trailer.
func recordsDigest(stream []byte) string {
	lines := bytes.SplitAfter(stream, []byte("\n"))
	h := sha256.New()
	for i, l := range lines {
		if i == 0 || len(l) == 0 || bytes.HasPrefix(l, []byte(`{"type":"trailer"`)) {
			continue
		}
		h.Write(l)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func openMigrated(ctx context.Context, raw, flag string) (dburl.URL, db.Store, error) {
	u, err := dburl.Parse(raw)
	if err != nil {
		return u, nil, &ConfigError{Err: fmt.Errorf("--%s: %w", flag, err)}
	}
	sqlDB, err := OpenSQLDB(ctx, u)
	if err != nil {
		return u, nil, err
	}
	defer sqlDB.Close()
	if err := migrate.Verify(ctx, u.Engine, sqlDB); err != nil {
		return u, nil, fmt.Errorf("--%s %s: %w (run \"powercontext server migrate\" against it first)", flag, u.Redacted, err)
	}
	store, err := OpenStore(ctx, u)
	if err != nil {
		return u, nil, fmt.Errorf("open %s: %w", u.Redacted, err)
	}
	return u, store, nil
}

// runCopy copies every scope of from into to and verifies each (see newCopyCommand).
func runCopy(ctx context.Context, from, to string) (CopyReport, error) {
	var rep CopyReport
	fu, src, err := openMigrated(ctx, from, "from")
	if err != nil {
		return rep, err
	}
	defer src.Close()
	tu, dst, err := openMigrated(ctx, to, "to")
	if err != nil {
		return rep, err
	}
	defer dst.Close()
	rep.From, rep.To, rep.NotCopied = fu.Redacted, tu.Redacted, notCopied
	fail := func(err error) (CopyReport, error) {
		rep.Error = err.Error()
		return rep, err
	}
	if taken, err := listScopes(ctx, dst, 1); err != nil {
		return fail(err)
	} else if len(taken) > 0 {
		return fail(fmt.Errorf("--to %s is not empty: it holds scope %q (copy into an empty deployment)", tu.Redacted, taken[0]))
	}
	scopes, err := listScopes(ctx, src, 0)
	if err != nil {
		return fail(err)
	}
	// Every scope is looked at before anything is written, so a refusal leaves the target empty.
	var copyable []string
	for _, scope := range scopes {
		err := portability.Exportable(ctx, src, scope)
		switch {
		case errors.Is(err, sources.ErrScopeErasing):
			rep.Skipped = append(rep.Skipped, SkippedCopy{ScopeID: scope, Reason: skipErasing})
		case err != nil:
			return fail(fmt.Errorf("scope %q cannot be copied: %w", scope, err))
		default:
			copyable = append(copyable, scope)
		}
	}
	for _, scope := range copyable {
		var out bytes.Buffer
		counts, err := portability.Exporter{Store: src}.Export(ctx, scope, &out, portability.Options{Embeddings: true})
		if errors.Is(err, sources.ErrScopeErasing) { // asked for since the check; nothing of it was imported
			rep.Skipped = append(rep.Skipped, SkippedCopy{ScopeID: scope, Reason: skipErasing})
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("export of scope %q: %w", scope, err))
		}
		if _, err := (portability.Importer{Store: dst}).Import(ctx, bytes.NewReader(out.Bytes()), portability.ImportOptions{}); err != nil {
			return fail(fmt.Errorf("import of scope %q: %w", scope, err))
		}
		var back bytes.Buffer
		again, err := portability.Exporter{Store: dst}.Export(ctx, scope, &back, portability.Options{Embeddings: true})
		if err != nil {
			return fail(fmt.Errorf("verifying scope %q: %w", scope, err))
		}
		want, got := recordsDigest(out.Bytes()), recordsDigest(back.Bytes())
		if again != counts || want != got {
			return fail(fmt.Errorf("verifying scope %q: the copy differs from the source (counts %+v, %+v; sha256 %s, %s)", scope, counts, again, want, got))
		}
		rep.Scopes = append(rep.Scopes, CopyScope{ScopeID: scope, Counts: counts, SHA256: want})
	}
	copied, err := listScopes(ctx, dst, 0)
	if err != nil {
		return fail(err)
	}
	if len(copied) != len(rep.Scopes) || len(rep.Scopes)+len(rep.Skipped) != len(scopes) {
		return fail(fmt.Errorf("the target holds %d scopes, the source %d (%d skipped)", len(copied), len(scopes), len(rep.Skipped)))
	}
	return rep, nil
}
