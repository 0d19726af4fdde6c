package cli

import (
	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

// Values the shell completes (cobra's `powercontext completion bash|zsh|fish|powershell` scripts ask the binary).
var (
	outputValues          = []string{outputText, outputJSON}
	searchModeValues      = []string{client.ModeFTS, client.ModeSemantic, client.ModeHybrid}
	operationStatusValues = []string{client.StatusQueued, client.StatusRunning, client.StatusRetryWait,
		client.StatusCancelling, client.StatusSucceeded, client.StatusFailed, client.StatusCancelled}
	operationKindValues = []string{client.KindMemoryFlush, client.KindExperienceIncubation, client.KindMemoryRedact,
		client.KindMemoryEmbed, client.KindScopeErase, client.KindScopeExport, client.KindScopeImport, "maintenance"}
	candidateStatusValues = []string{"pending", "approved", "rejected", "withdrawn"}
)

// completeValues makes flag name of cmd complete to values (and never to file names).
func completeValues(cmd *cobra.Command, name string, values []string) {
	err := cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
	if err != nil {
		panic(err) // a programming error: the flag is not defined on cmd
	}
}
