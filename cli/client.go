package cli

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

// Output formats of --output.
const (
	outputText = "text"
	outputJSON = "json"
)

// clientFlags are the flags shared by every client command (persistent on each command group).
type clientFlags struct {
	server  string
	token   string
	caFile  string
	output  string
	timeout time.Duration
}

func (f *clientFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	// Defaults from the environment are resolved at run time so that --help never prints a token.
	pf.StringVar(&f.server, "server", "", "powercontext API URL (default $"+EnvServerURL+", else "+DefaultServerURL+")")
	pf.StringVar(&f.token, "token", "", "bearer token (default $"+EnvAuthToken+")")
	pf.StringVar(&f.caFile, "ca-file", "", "PEM CA bundle to trust for an https:// server (default $"+EnvCAFile+", else the system's)")
	pf.StringVarP(&f.output, "output", "o", outputText, "output format: text (human-friendly) or json (the server's JSON)")
	pf.DurationVar(&f.timeout, "timeout", client.DefaultTimeout, "timeout of each HTTP request")
	completeValues(cmd, "output", outputValues)
}

// session is one command's client plus what it needs to print.
type session struct {
	c    *client.Client
	json bool
	// raw is the body of the last successful answer (printed as is with --output json).
	raw []byte
	// localDefault: the server is the default local URL, so "start it with: make run" is a useful hint.
	localDefault bool
}

// connect validates the client flags and builds the client (bad flags are UsageErrors, exit 2).
func (f *clientFlags) connect(extra ...client.Option) (*session, error) {
	switch f.output {
	case outputText, outputJSON:
	default:
		return nil, usageErrorf("--output must be text or json, not %q", f.output)
	}
	if f.timeout < 0 {
		return nil, usageErrorf("--timeout must not be negative")
	}
	server := f.server
	if server == "" {
		server = envOr(EnvServerURL, DefaultServerURL)
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErrorf("--server must be an http:// or https:// URL such as %s, not %q", DefaultServerURL, server)
	}
	token := f.token
	if token == "" {
		token = envOr(EnvAuthToken, "")
	}
	s := &session{json: f.output == outputJSON, localDefault: strings.TrimRight(server, "/") == DefaultServerURL}
	opts := []client.Option{client.WithToken(token), client.WithTimeout(f.timeout),
		client.WithResponseObserver(func(_, _ string, status int, body []byte) {
			if status < 400 {
				s.raw = body
			}
		})}
	caOpt, err := caOption(f.caFile)
	if err != nil {
		return nil, err
	}
	if caOpt != nil {
		opts = append(opts, caOpt)
	}
	s.c = client.New(server, append(opts, extra...)...)
	return s, nil
}

// printJSON writes the last raw answer of the server.
func (s *session) printJSON(w io.Writer) error {
	return writeJSONLine(w, s.raw)
}

func writeJSONLine(w io.Writer, b []byte) error {
	b = bytes.TrimRight(b, "\r\n")
	_, err := fmt.Fprintf(w, "%s\n", b)
	return err
}

// explain turns client errors into one helpful line, keeping the error underneath (a *Failure): Main prints the
// line (or, with -o json, a JSON object) and exits with ExitCode's code for it.
func (s *session) explain(err error) error {
	if err == nil {
		return nil
	}
	return &Failure{Msg: s.explainLine(err), Err: err}
}

func (s *session) explainLine(err error) string {
	var ce *client.ConnectionError
	if errors.As(err, &ce) {
		if ce.Timeout {
			return fmt.Sprintf("powercontext at %s did not answer in time (raise --timeout, or check the server)", ce.URL)
		}
		var cert *tls.CertificateVerificationError
		if errors.As(err, &cert) {
			return fmt.Sprintf("the TLS certificate of powercontext at %s is not trusted: pass --ca-file (or set "+
				"POWERCONTEXT_CA_FILE) to trust its certificate authority", ce.URL)
		}
		msg := fmt.Sprintf("cannot reach powercontext at %s: is the server running?", ce.URL)
		if s.localDefault {
			msg += " (start it with: make run)"
		}
		return msg
	}
	var pending *client.OperationPendingError
	if errors.As(err, &pending) {
		return fmt.Sprintf("operation %s is still %s when --deadline %s passed; it continues on the server; "+
			"follow it with: powercontext ops get %s", pending.OperationID, pendingPhrase(pending.Status),
			pending.Deadline, pending.OperationID)
	}
	var failed *client.OperationFailedError
	if errors.As(err, &failed) {
		switch {
		case failed.Blocked:
			return fmt.Sprintf("memory flush is blocked by failed operation %s (%s): retry or cancel it "+
				"(see: powercontext ops get %s)", failed.OperationID, failed.Code, failed.OperationID)
		case failed.Code == client.StatusCancelled:
			return fmt.Sprintf("operation %s was cancelled", failed.OperationID)
		default:
			return fmt.Sprintf("operation %s failed: %s (see: powercontext ops get %s)", failed.OperationID,
				failureName(failed.Category, failed.Code), failed.OperationID)
		}
	}
	var ae *client.APIError
	if errors.As(err, &ae) {
		msg := ae.Error()
		switch {
		case ae.Status == 401:
			msg += "; pass --token or set " + EnvAuthToken
		case ae.Code == "operation_conflict" || ae.Code == "candidate_conflict":
			if v, ok := ae.Details["actual_version"].(float64); ok {
				msg += fmt.Sprintf("; it is %v at version %d", ae.Details["status"], int64(v))
			}
		}
		return msg
	}
	return err.Error()
}

// pendingPhrase says what an operation still running at the deadline is doing, in words.
func pendingPhrase(status string) string {
	switch status {
	case "":
		return "pending"
	case client.StatusRetryWait:
		return "waiting to retry after a failed attempt (retry_wait)"
	case client.StatusQueued:
		return "queued"
	default:
		return status
	}
}

func pendingStatus(s string) string {
	if s == "" {
		return "pending"
	}
	return s
}

func failureName(category, code string) string {
	if category == "" {
		return code
	}
	return category + "/" + code
}

// args wraps a cobra argument check so that a wrong argument count is a UsageError (exit 2).
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return &UsageError{Err: fmt.Errorf("%w (see: %s --help)", err, cmd.CommandPath())}
		}
		return nil
	}
}

func requireFlag(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return usageErrorf("--%s is required", name)
	}
	return nil
}

// group is a command that only holds subcommands; an unknown subcommand is a UsageError.
func group(use, short, example string, f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    args(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	f.register(cmd)
	return cmd
}

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }
func (t *table) flush() error        { return t.tw.Flush() }

// cell makes a value safe for one table cell: no tabs or line breaks.
func cell(s string) string {
	return strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func fmtPositions(p []int64) string {
	if len(p) == 0 {
		return "-"
	}
	s := make([]string, len(p))
	for i, v := range p {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, ",")
}

// compactJSON renders raw JSON on one line ("-" for null or empty).
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "-"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
