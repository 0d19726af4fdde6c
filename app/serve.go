package app

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func newRunCommand() *cobra.Command {
	cfg := DefaultConfig()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the powercontext server (all roles, or one role of a distributed deployment)",
		Long: `Run the powercontext server. single_node (the default) runs the API, the scheduler and a worker in one
process on the embedded SQLite database and migrates it; distributed runs one role per process (api, scheduler or
worker) on PostgreSQL or MySQL/OceanBase and only verifies the schema revision (run "powercontext server migrate"
first). Every flag is also an environment variable POWERCONTEXT_<GROUP>_<FIELD>; flags win.

A bad configuration is refused before anything starts, with a one-line reason and exit code 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.ApplyEnv(cmd.Flags(), nil); err != nil {
				return err
			}
			cfg.ApplyModeDefaults(cmd.Flags(), nil)
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Serve(ctx, cfg)
		},
	}
	cfg.BindFlags(cmd.Flags())
	return cmd
}

// Serve starts the runtime for cfg and runs it until ctx is done.
func Serve(ctx context.Context, cfg Config) error {
	rt, err := Start(ctx, cfg, os.Stderr)
	if err != nil {
		return err
	}
	return rt.Run(ctx)
}
