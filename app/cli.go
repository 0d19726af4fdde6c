package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
)

// Exit codes of the powercontext command.
const (
	ExitOK     = 0
	ExitFailed = 1 // the command ran and failed
	ExitConfig = 2 // refused before start: bad flags or configuration
)

// EnvDatabaseURL names the database URL variable (docs/architecture.md#configuration); --database-url overrides it.
const EnvDatabaseURL = "POWERCONTEXT_DATABASE_URL"

// ConfigError is a configuration problem found before anything started; the command exits with ExitConfig.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Main runs the powercontext command line with args (without the program name) and returns the exit code.
// Failures are reported as one line on stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "powercontext: "+oneLine(err.Error()))
	var cerr *ConfigError
	var uerr *cli.UsageError
	if errors.As(err, &cerr) || errors.As(err, &uerr) {
		return ExitConfig
	}
	return ExitFailed
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
	root.CompletionOptions.DisableDefaultCmd = true
	// Bad flags and arguments are configuration errors (exit 2).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ConfigError{Err: err} })

	server := &cobra.Command{
		Use:   "server",
		Short: "Run, migrate or probe the powercontext server",
		Args:  cobra.NoArgs,
	}
	server.AddCommand(newMigrateCommand(), newRunCommand(), newHealthCommand())
	root.AddCommand(server)
	root.AddCommand(cli.Commands()...)
	return root
}

func newMigrateCommand() *cobra.Command {
	var databaseURL string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the pending forward-only schema migrations",
		Long: `Apply the pending forward-only schema migrations embedded in this binary, in order, under the
schema-migration lease, recording each in atlas_schema_revisions (the Atlas CLI's table, so this command and
"atlas migrate apply" continue one history). Run it with the migration account: distributed roles only verify the
schema revision at start and refuse a database that is behind or ahead. A rerun reports "nothing pending".

Database URLs: sqlite://PATH, postgres://user:pass@host:port/db?sslmode=disable,
mysql://user:pass@host:port/db (oceanbase:// is an alias of mysql://).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if databaseURL == "" {
				databaseURL = envOr(EnvDatabaseURL, dburl.DefaultURL)
			}
			return runMigrate(cmd.Context(), cmd.OutOrStdout(), databaseURL)
		},
	}
	// The default is resolved at run time so that --help never prints a password from the environment.
	cmd.Flags().StringVar(&databaseURL, "database-url", "",
		"database URL of the migration account (default $"+EnvDatabaseURL+", else "+dburl.DefaultURL+")")
	return cmd
}

func runMigrate(ctx context.Context, out io.Writer, rawURL string) error {
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

	res, err := migrate.Apply(ctx, u.Engine, sqlDB, store, migrationOwner())
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
