package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

func newExperienceCommand() *cobra.Command {
	f := &clientFlags{}
	cmd := group("experience", "Incubate Experience lessons and review the candidates",
		`  powercontext experience incubate --scope team
  powercontext experience candidates --scope team
  powercontext experience approve 6f1c0e4a-2b7d-4f5e-9a1c-3d2e8b7f6a10 --expected-version 1`, f)
	cmd.AddCommand(newExperienceIncubateCommand(f), newExperienceCandidatesCommand(f),
		newExperienceReviewCommand(f, "approve", "Approve a pending candidate (agents see approved lessons in their context)"),
		newExperienceReviewCommand(f, "reject", "Reject a pending candidate"))
	return cmd
}

func newExperienceIncubateCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "incubate --scope SCOPE [--deadline 30s]",
		Short: "Propose Experience lessons from a scope's new task outcomes now, and wait for them",
		Long: `Incubate a scope's Experience now instead of at the next schedule: the Sources captured since the last
incubation are read and lessons are proposed from the task outcomes among them. The request is submitted as an
operation (POST /v1/experience/incubate with Prefer: respond-async) and followed like "memory flush". The proposed
candidates are pending: review them with "powercontext experience candidates" and approve or reject each one.

When the operation is still running at --deadline the command exits 5 and the operation continues on the server
(follow it with "powercontext ops get ID"). A failed or cancelled operation exits 1 naming its error code. When
standard error is not a terminal, a plain progress line is printed there every --progress-interval (10s).`,
		Example: `  powercontext experience incubate --scope team
  powercontext experience incubate --scope team --output json`,
	}
	return followTrigger(cmd, f, "scope to incubate (required)", (*client.Client).IncubateExperienceWith, printIncubate)
}

func printIncubate(w io.Writer, scope string, r client.IncubateResult) error {
	if r.Status == client.FlushIdle {
		_, err := fmt.Fprintf(w, "nothing to incubate: scope %s is up to date at journal position %d\n", scope, r.CurrentCursor)
		return err
	}
	op := ""
	if r.OperationID != nil {
		op = " (operation " + *r.OperationID + ")"
	}
	_, err := fmt.Fprintf(w, "incubated %d sources of scope %s: journal %d → %d of %d; %d candidates proposed%s\n",
		r.ProcessedSourceCount, scope, r.PreviousCursor, r.CurrentCursor, r.HighWatermark, r.CandidateCount, op)
	if err == nil && r.CandidateCount > 0 {
		_, err = fmt.Fprintf(w, "review them: powercontext experience candidates --scope %s --status pending\n", scope)
	}
	return err
}

func newExperienceCandidatesCommand(f *clientFlags) *cobra.Command {
	var p client.ListCandidatesParams
	cmd := &cobra.Command{
		Use:   "candidates --scope SCOPE [--status pending|approved|rejected|withdrawn] [--limit N]",
		Short: "List a scope's Experience candidates, newest first",
		Long: `List a scope's Experience candidates (proposed lessons), newest first, with the state version that
"experience approve" and "experience reject" need.`,
		Example: `  powercontext experience candidates --scope team --status pending
  powercontext experience candidates --scope team --output json | jq '.items[].lesson'`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", p.ScopeID); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			list, err := s.c.ListExperienceCandidates(cmd.Context(), p)
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			if len(list.Items) == 0 {
				_, err := fmt.Fprintln(out, "no candidates")
				return err
			}
			t := newTable(out, "CANDIDATE ID", "STATUS", "VERSION", "CREATED", "CITES", "TITLE")
			for _, c := range list.Items {
				t.row(c.CandidateID, c.Status, fmt.Sprint(c.StateVersion), fmtTime(c.CreatedAt), fmt.Sprint(c.CitedPositions),
					cell(abbreviate(c.Title, 60)))
			}
			return t.flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.ScopeID, "scope", "", "scope whose candidates to list (required)")
	fl.StringVar(&p.Status, "status", "", "only this status: pending, approved, rejected or withdrawn")
	fl.IntVar(&p.Limit, "limit", 0, "most candidates to list (1..100, default 50)")
	completeValues(cmd, "status", candidateStatusValues)
	return cmd
}

func newExperienceReviewCommand(f *clientFlags, verb, short string) *cobra.Command {
	var version int64
	cmd := &cobra.Command{
		Use:   verb + " CANDIDATE_ID --expected-version N",
		Short: short,
		Long: short + `. The --expected-version must be the candidate's current state version (see "powercontext
experience candidates"): a candidate reviewed meanwhile, or no longer pending, is refused with candidate_conflict,
which names its actual status and version.`,
		Example: fmt.Sprintf(`  powercontext experience candidates --scope team --status pending   # note its version
  powercontext experience %s 6f1c0e4a-2b7d-4f5e-9a1c-3d2e8b7f6a10 --expected-version 1`, verb),
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if !cmd.Flags().Changed("expected-version") {
				return usageErrorf("--expected-version is required (the candidate's state version; see: powercontext experience candidates)")
			}
			if version < 1 {
				return usageErrorf("--expected-version must be an integer >= 1")
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			review := s.c.ApproveCandidate
			if verb == "reject" {
				review = s.c.RejectCandidate
			}
			c, err := review(cmd.Context(), a[0], version)
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			t := newTable(cmd.OutOrStdout(), "candidate", c.CandidateID)
			t.row("scope", cell(c.ScopeID))
			t.row("status", c.Status)
			t.row("version", fmt.Sprint(c.StateVersion))
			t.row("title", cell(c.Title))
			t.row("lesson", cell(c.Lesson))
			return t.flush()
		},
	}
	cmd.Flags().Int64Var(&version, "expected-version", 0, "the candidate's current state version (required)")
	return cmd
}
