package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/internal/buildinfo"
)

// Exit codes of the powercontext command (the table is cli's, documented in README.md#exit-codes).
const (
	ExitOK          = cli.ExitOK
	ExitFailed      = cli.ExitFailed      // the command ran and failed
	ExitConfig      = cli.ExitUsage       // refused before start: bad flags or configuration
	ExitUnreachable = cli.ExitUnreachable // client commands: no answer from the server
	ExitClientError = cli.ExitClientError // client commands: the server answered 4xx
	ExitPending     = cli.ExitPending     // client commands: the operation was still running at --deadline
)

// EnvDatabaseURL names the database URL variable (docs/architecture.md#configuration); --database-url overrides it.
const EnvDatabaseURL = "POWERCONTEXT_DATABASE_URL"

// ConfigError is a configuration problem found before anything started; the command exits with ExitConfig.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Main runs the powercontext command line with args (without the program name) and returns the exit code.
// Failures are reported as one line on stderr: text, or with --output json a JSON object (cli.WriteJSONError).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := cli.ExitCode(err)
	var cerr *ConfigError
	if errors.As(err, &cerr) {
		code = ExitConfig
	}
	if cli.JSONOutput(args) {
		if werr := cli.WriteJSONError(stderr, err, code); werr == nil {
			return code
		}
	}
	fmt.Fprintln(stderr, "powercontext: "+oneLine(err.Error()))
	return code
}

// NewRootCommand builds the `powercontext` command tree: the server commands of this package and the HTTP client
// commands of package cli.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "powercontext",
		Short:         "Durable context for agents: sources in, memory and experience out",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// `powercontext --version` prints the one-line version; `powercontext version` the whole build record.
	root.Version = buildinfo.Version()
	root.SetVersionTemplate("powercontext {{.Version}}\n")
	// Bad flags and arguments are configuration errors (exit 2).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ConfigError{Err: err} })

	server := &cobra.Command{
		Use:   "server",
		Short: "Run, migrate or probe the powercontext server",
		Args:  cobra.NoArgs,
	}
	server.AddCommand(newMigrateCommand(), newRunCommand(), newHealthCommand(), newCopyCommand())
	root.AddCommand(server, newVersionCommand())
	root.AddCommand(cli.Commands()...)
	// cobra's own `completion bash|zsh|fish|powershell` command stays enabled.
	return root
}

// newVersionCommand prints the build record (internal/buildinfo): text by default, the JSON object with -o json.
func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version, VCS revision and build time of this binary",
		Example: "  powercontext version\n  powercontext version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Get()
			w := cmd.OutOrStdout()
			switch output {
			case "json":
				return writeJSON(w, info)
			case "", "text":
				_, err := fmt.Fprintf(w, "powercontext %s\nmodule:     %s\nrevision:   %s (modified: %t)\ncommitted:  %s\nbuilt:      %s\ngo:         %s %s\n",
					info.Version, info.Module, orUnknown(info.Revision), info.Modified, orUnknown(info.CommitTime),
					orUnknown(info.BuildTime), info.GoVersion, info.Platform)
				return err
			default:
				return &ConfigError{Err: fmt.Errorf("--output must be text or json, got %q", output)}
			}
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// addOutputFlag gives a server-side command the same --output/-o text|json flag as the client commands.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
}

func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return &ConfigError{Err: fmt.Errorf("--output must be text or json, got %q", output)}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func newMigrateCommand() *cobra.Command {
	var databaseURL string
	var force, status, dryRun bool
	var output string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the pending forward-only schema migrations",
		Long: `Apply the pending forward-only schema migrations embedded in this binary, in order, under the
schema-migration lease, recording each in atlas_schema_revisions (the Atlas CLI's table, so this command and
"atlas migrate apply" continue one history). Run it with the migration account: distributed roles only verify the
schema revision at start and refuse a database they cannot run against. A rerun reports "nothing pending".

Rolling upgrades (README.md#rolling-upgrades): a migration labelled expand_ is applied under a running fleet of the
previous release. Any other migration is refused while a live member of the deployment cannot run against it (its
advertised schema range ends below it): roll those processes to this release first, or pass --force.

Database URLs: sqlite://PATH, postgres://user:pass@host:port/db?sslmode=disable,
mysql://user:pass@host:port/db (oceanbase:// is an alias of mysql://).

--status prints the schema revision and what is pending without writing anything; it exits 1 when this binary
cannot run against the database. --dry-run prints what a run would apply (and whether it would be refused) and
writes nothing.`,
		Example: `  powercontext server migrate --database-url postgres://migrator@db:5432/pc
  powercontext server migrate --status --database-url mysql://migrator@db:3306/pc
  powercontext server migrate --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if databaseURL == "" {
				databaseURL = envOr(EnvDatabaseURL, dburl.DefaultURL)
			}
			if status && dryRun {
				return &ConfigError{Err: errors.New("--status and --dry-run are exclusive")}
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			if status || dryRun {
				return runMigrateStatus(cmd.Context(), cmd.OutOrStdout(), databaseURL, dryRun, force, output == "json")
			}
			return runMigrate(cmd.Context(), cmd.OutOrStdout(), databaseURL, force, output == "json")
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "apply even while live members cannot run against the result")
	cmd.Flags().BoolVar(&status, "status", false, "print the schema revision and pending migrations; write nothing")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be applied; write nothing")
	addOutputFlag(cmd, &output)
	// The default is resolved at run time so that --help never prints a password from the environment.
	cmd.Flags().StringVar(&databaseURL, "database-url", "",
		"database URL of the migration account (default $"+EnvDatabaseURL+", else "+dburl.DefaultURL+")")
	return cmd
}

// runMigrateStatus reads the schema revision (migrate.Status never writes) and prints it: with dryRun, as the list
// of files a run would apply and whether the rolling-upgrade guard would refuse it.
// migrateReport is the -o json form of every `server migrate` run.
type migrateReport struct {
	Engine   string   `json:"engine"`
	Current  string   `json:"current"`
	Expected string   `json:"expected,omitempty"`
	Applied  []string `json:"applied,omitempty"`
	Pending  []string `json:"pending,omitempty"`
	Unknown  []string `json:"unknown,omitempty"`
	Dirty    string   `json:"dirty,omitempty"`
	DryRun   bool     `json:"dry_run,omitempty"`
	// Compatible: this binary can run against the database as it is (--status only).
	Compatible *bool  `json:"compatible,omitempty"`
	Error      string `json:"error,omitempty"`
}

// runMigrateStatus reports the schema (--status) or what an apply would do (--dry-run) without writing: it builds
// one migrateReport and one verdict, then renders them as JSON or as text.
func runMigrateStatus(ctx context.Context, out io.Writer, rawURL string, dryRun, force, asJSON bool) error {
	u, err := dburl.Parse(rawURL)
	if err != nil {
		return &ConfigError{Err: err}
	}
	sqlDB, err := OpenSQLDB(ctx, u)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	rep, err := migrate.Status(ctx, u.Engine, sqlDB)
	if err != nil {
		return err
	}
	jr := migrateReport{Engine: string(u.Engine), Current: rep.Current, Expected: rep.Expected, Pending: rep.Pending,
		Unknown: rep.Unknown, DryRun: dryRun}
	if rep.Dirty != nil {
		jr.Dirty = rep.Dirty.Name()
	}
	// The verdict: a dry run is refused when an apply would leave live members behind; a status check fails when
	// this binary cannot run against the database.
	var verdict error
	if dryRun {
		if !force && (len(rep.Pending) > 0 || rep.Dirty != nil) {
			store, err := OpenStore(ctx, u)
			if err != nil {
				return fmt.Errorf("open %s: %w", u.Redacted, err)
			}
			defer store.Close()
			verdict = refuseLeavingMembersBehind(ctx, u.Engine, sqlDB, store)
		}
	} else {
		verdict = migrate.Verify(ctx, u.Engine, sqlDB)
		ok := verdict == nil
		jr.Compatible = &ok
	}
	if verdict != nil {
		jr.Error = verdict.Error()
	}
	if asJSON {
		if err := writeJSON(out, jr); err != nil {
			return err
		}
		return verdict
	}
	writeMigrateText(out, u, rep, dryRun, verdict)
	return verdict
}

// writeMigrateText renders runMigrateStatus's report for a terminal (the verdict's error is printed by the caller).
func writeMigrateText(out io.Writer, u dburl.URL, rep migrate.StatusReport, dryRun bool, verdict error) {
	current := rep.Current
	if current == "" {
		current = "none"
	}
	if dryRun {
		if len(rep.Pending) == 0 && rep.Dirty == nil {
			fmt.Fprintf(out, "nothing pending: %s schema at version %s (%s)\n", u.Engine, current, u.Redacted)
			return
		}
		if rep.Dirty != nil {
			fmt.Fprintf(out, "would resume %s (applied %d of %d statements)\n", rep.Dirty.Name(), rep.Dirty.Applied, rep.Dirty.Total)
		}
		for _, name := range rep.Pending {
			fmt.Fprintf(out, "would apply %s\n", name)
		}
		if verdict == nil {
			fmt.Fprintf(out, "%s schema would go from version %s to %s (dry run: nothing written)\n", u.Engine, current, rep.Expected)
		}
		return
	}
	fmt.Fprintf(out, "engine:   %s (%s)\ncurrent:  %s\nexpected: %s\n", u.Engine, u.Redacted, current, rep.Expected)
	for _, name := range rep.Pending {
		fmt.Fprintf(out, "pending:  %s\n", name)
	}
	for _, name := range rep.Unknown {
		fmt.Fprintf(out, "unknown:  %s (applied by a newer release)\n", name)
	}
	if rep.Dirty != nil {
		fmt.Fprintf(out, "dirty:    %s (applied %d of %d statements)\n", rep.Dirty.Name(), rep.Dirty.Applied, rep.Dirty.Total)
	}
	if verdict == nil {
		fmt.Fprintln(out, "status:   this binary can run against the database")
	}
}

func runMigrate(ctx context.Context, out io.Writer, rawURL string, force, asJSON bool) error {
	u, err := dburl.Parse(rawURL)
	if err != nil {
		return &ConfigError{Err: err}
	}
	sqlDB, err := OpenSQLDB(ctx, u)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	store, err := OpenStore(ctx, u)
	if err != nil {
		return fmt.Errorf("open %s: %w", u.Redacted, err)
	}
	defer store.Close()

	if !force {
		if err := refuseLeavingMembersBehind(ctx, u.Engine, sqlDB, store); err != nil {
			return err
		}
	}
	res, err := migrate.Apply(ctx, u.Engine, sqlDB, store, migrationOwner())
	if asJSON {
		jr := migrateReport{Engine: string(u.Engine), Current: res.Current, Applied: res.Applied}
		if err != nil {
			jr.Error = err.Error()
		}
		if werr := writeJSON(out, jr); werr != nil {
			return werr
		}
		return err
	}
	for _, name := range res.Applied {
		fmt.Fprintf(out, "applied %s\n", name)
	}
	if err != nil {
		return err
	}
	if res.NothingPending() {
		fmt.Fprintf(out, "nothing pending: %s schema at version %s (%s)\n", u.Engine, res.Current, u.Redacted)
		return nil
	}
	fmt.Fprintf(out, "%s schema at version %s (%s)\n", u.Engine, res.Current, u.Redacted)
	return nil
}

// refuseLeavingMembersBehind refuses a pending migration that is not expand-only while a live member advertises a
// schema range ending below its version: that process could not run against the migrated database.
func refuseLeavingMembersBehind(ctx context.Context, engine db.Engine, sqlDB *sql.DB, store db.Store) error {
	rep, err := migrate.Status(ctx, engine, sqlDB)
	if err != nil || len(rep.Pending) == 0 {
		return nil // Apply reports what is wrong with the history
	}
	members, err := coordinator.LiveMembers(ctx, store)
	if err != nil {
		return nil // no membership table yet (an empty database), or none readable: nothing to protect
	}
	for _, name := range rep.Pending {
		if migrate.IsExpand(name) {
			continue
		}
		version := migrate.VersionNumber(name)
		var behind []string
		for _, m := range members {
			if m.SchemaMax < version {
				behind = append(behind, m.MemberID+" ("+m.BuildVersion+")")
			}
		}
		if len(behind) > 0 {
			return fmt.Errorf("%s is not expand-only and %d live member(s) cannot run against it: %s; roll them to "+
				"this release first (README.md#rolling-upgrades), or pass --force", name, len(behind), strings.Join(behind, ", "))
		}
	}
	return nil
}

// migrationOwner is the lease owner id of one `server migrate` process.
func migrationOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return "migrate/" + host + "/" + uuid.NewString()
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
