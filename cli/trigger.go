package cli

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

// DefaultProgressInterval is how often a followed operation prints a plain progress line on standard error when
// that is not a terminal (--progress-interval).
const DefaultProgressInterval = 10 * time.Second

// followTrigger gives cmd the behaviour "memory flush" and "experience incubate" share: --scope, --deadline and
// --poll flags; submit the trigger, follow its operation with a status line on standard error (live on a terminal,
// else a plain line every --progress-interval), then print the result, or its JSON with -o json.
func followTrigger[R any](cmd *cobra.Command, f *clientFlags, scopeHelp string,
	run func(*client.Client, context.Context, string, func(client.OperationRecord)) (R, error),
	print func(io.Writer, string, R) error) *cobra.Command {
	var scope string
	var deadline, poll, progressEvery time.Duration
	cmd.Args = args(cobra.NoArgs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := requireFlag("scope", scope); err != nil {
			return err
		}
		if deadline < 0 || poll <= 0 || progressEvery < 0 {
			return usageErrorf("--deadline and --progress-interval must not be negative and --poll must be positive")
		}
		s, err := f.connect(client.WithOperationDeadline(deadline), client.WithPollInterval(poll))
		if err != nil {
			return err
		}
		status := newStatusLine(cmd.ErrOrStderr(), s.json, progressEvery)
		res, err := run(s.c, cmd.Context(), scope, status.show)
		status.end()
		if err != nil {
			return s.explain(err)
		}
		out := cmd.OutOrStdout()
		if s.json {
			b, err := json.Marshal(res)
			if err != nil {
				return err
			}
			return writeJSONLine(out, b)
		}
		return print(out, scope, res)
	}
	fl := cmd.Flags()
	fl.StringVar(&scope, "scope", "", scopeHelp)
	fl.DurationVar(&deadline, "deadline", client.DefaultOperationDeadline, "how long to wait for the operation")
	fl.DurationVar(&poll, "poll", client.DefaultPollInterval, "pause between two status requests")
	fl.DurationVar(&progressEvery, "progress-interval", DefaultProgressInterval,
		"when standard error is not a terminal, print a progress line there this often (0 = never)")
	return cmd
}
