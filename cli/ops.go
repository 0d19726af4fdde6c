package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

func newOpsCommand() *cobra.Command {
	f := &clientFlags{}
	cmd := group("ops", "Inspect, cancel, retry and skip operations (memory flushes, experience incubations, maintenance)",
		`  powercontext ops list --scope team --status failed
  powercontext ops get 0b9f6c2e-8d1a-4c57-9a43-2f4f1f0c8e11
  powercontext ops retry 0b9f6c2e-8d1a-4c57-9a43-2f4f1f0c8e11 --expected-version 5`, f)
	cmd.AddCommand(newOpsListCommand(f), newOpsGetCommand(f),
		newOpsTransitionCommand(f, "cancel", "Cancel an operation (queued or retry_wait → cancelled; running → cancelling)",
			`Cancel an operation. The --expected-version must be the operation's current state_version (see "powercontext
ops get ID"): a stale version or an illegal transition is refused with operation_conflict, which names the
actual status and version. A running operation becomes cancelling and stops at its next checkpoint.`),
		newOpsTransitionCommand(f, "retry", "Retry a failed operation (failed → queued)",
			`Retry a failed operation: it is queued again with a fresh attempt budget. The --expected-version must be the
operation's current state_version (see "powercontext ops get ID"); a stale version is refused with
operation_conflict. Retrying a failed memory flush unblocks its scope.`),
		newOpsTransitionCommand(f, "skip", "Skip a failed window (failed → succeeded, result skipped)",
			`Skip a failed memory flush or experience incubation: its consumer's cursor moves past the window without
processing it (Memory records the skip in a revision), the operation succeeds with result code skipped and the
scope's lane moves on. Use it for a window that cannot succeed, such as one the provider rejects
(provider/request_rejected). Admins only. The --expected-version must be the operation's current state_version.`))
	return cmd
}

func newOpsListCommand(f *clientFlags) *cobra.Command {
	var p client.ListOperationsParams
	cmd := &cobra.Command{
		Use:   "list [--scope SCOPE] [--kind KIND] [--status STATUS] [--limit N] [--cursor CURSOR]",
		Short: "List operations, newest first",
		Long: `List operations, newest first. Kinds: memory_flush, experience_incubation, maintenance (admins only).
Statuses: queued, running, retry_wait, cancelling, succeeded, failed, cancelled. When more operations exist, the
output ends with the --cursor that lists the next page.`,
		Example: `  powercontext ops list
  powercontext ops list --scope team --kind memory_flush --status failed
  powercontext ops list --limit 10 --cursor MTc2NDY4MDAwMDAwMDAwMDo...`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.connect()
			if err != nil {
				return err
			}
			list, err := s.c.ListOperations(cmd.Context(), p)
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			if len(list.Items) == 0 {
				_, err := fmt.Fprintln(out, "no operations")
				return err
			}
			t := newTable(out, "OPERATION ID", "KIND", "SCOPE", "STATUS", "ATTEMPTS", "VERSION", "CREATED", "ERROR")
			for _, r := range list.Items {
				t.row(r.OperationID, r.Kind, cell(abbreviate(r.ScopeID, 40)), r.Status, fmt.Sprint(r.AttemptCount),
					fmt.Sprint(r.StateVersion), fmtTime(r.CreatedAt), opError(r))
			}
			if err := t.flush(); err != nil {
				return err
			}
			if list.NextCursor != nil {
				_, err = fmt.Fprintf(out, "next page: --cursor %s\n", *list.NextCursor)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.ScopeID, "scope", "", "only operations of this scope")
	fl.StringVar(&p.Kind, "kind", "", "only this kind: memory_flush, experience_incubation, memory_redact, memory_embed, scope_erase, scope_export, scope_import or maintenance")
	fl.StringVar(&p.Status, "status", "", "only this status: queued, running, retry_wait, cancelling, succeeded, failed or cancelled")
	fl.IntVar(&p.Limit, "limit", 0, "most operations to list (1..100, default 50)")
	fl.StringVar(&p.Cursor, "cursor", "", "continue after the previous page (from its output)")
	completeValues(cmd, "kind", operationKindValues)
	completeValues(cmd, "status", operationStatusValues)
	return cmd
}

func newOpsGetCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get OPERATION_ID",
		Short: "Show one operation",
		Example: `  powercontext ops get 0b9f6c2e-8d1a-4c57-9a43-2f4f1f0c8e11
  powercontext ops get 0b9f6c2e-8d1a-4c57-9a43-2f4f1f0c8e11 --output json | jq .status`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			s, err := f.connect()
			if err != nil {
				return err
			}
			rec, err := s.c.GetOperation(cmd.Context(), a[0])
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			return printOperation(cmd.OutOrStdout(), rec)
		},
	}
}

func newOpsTransitionCommand(f *clientFlags, verb, short, long string) *cobra.Command {
	var version int64
	cmd := &cobra.Command{
		Use:   verb + " OPERATION_ID --expected-version N",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  powercontext ops get 0b9f6c2e-8d1a-4c57-9a43-2f4f1f0c8e11      # note its version
  powercontext ops %s 0b9f6c2e-8d1a-4c57-9a43-2f4f1f0c8e11 --expected-version 5`, verb),
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if !cmd.Flags().Changed("expected-version") {
				return usageErrorf("--expected-version is required (the operation's state_version; see: powercontext ops get %s)", a[0])
			}
			if version < 1 {
				return usageErrorf("--expected-version must be an integer >= 1")
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			var rec client.OperationRecord
			switch verb {
			case "cancel":
				rec, err = s.c.CancelOperation(cmd.Context(), a[0], version)
			case "skip":
				rec, err = s.c.SkipOperation(cmd.Context(), a[0], version)
			default:
				rec, err = s.c.RetryOperation(cmd.Context(), a[0], version)
			}
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			return printOperation(cmd.OutOrStdout(), rec)
		},
	}
	cmd.Flags().Int64Var(&version, "expected-version", 0, "the operation's current state_version (required)")
	return cmd
}

func opError(r client.OperationRecord) string {
	if r.Error == nil {
		return "-"
	}
	return failureName(r.Error.Category, r.Error.Code)
}

func printOperation(w io.Writer, r client.OperationRecord) error {
	completed := "-"
	if r.CompletedAt != nil {
		completed = fmtTime(*r.CompletedAt)
	}
	t := newTable(w, "operation", r.OperationID)
	t.row("kind", r.Kind)
	t.row("scope", cell(r.ScopeID))
	t.row("status", r.Status)
	t.row("attempts", fmt.Sprint(r.AttemptCount))
	t.row("version", fmt.Sprint(r.StateVersion))
	t.row("created", fmtTime(r.CreatedAt))
	t.row("updated", fmtTime(r.UpdatedAt))
	t.row("available", fmtTime(r.AvailableAt))
	t.row("completed", completed)
	t.row("error", opError(r))
	t.row("result", compactJSON(r.Result))
	return t.flush()
}
