package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

// StateFile is the sync's own record in the skills folder: the server, the agent's credential (the file is 0600)
// and the folders the sync created, with the revision and tree digest it wrote (docs/skills.md#syncing-a-skills-folder).
const StateFile = ".powercontext-skills.json"

type skillsState struct {
	Server   string                      `json:"server"`
	TargetID string                      `json:"target_id"`
	ScopeID  string                      `json:"scope_id"`
	Cred     string                      `json:"credential"`
	CAFile   string                      `json:"ca_file,omitempty"` // the --ca-file enroll was given (absolute)
	Skills   map[string]skillsStateEntry `json:"skills"`
}

type skillsStateEntry struct {
	Revision   int64  `json:"revision"`
	TreeDigest string `json:"tree_digest"`
	// Installing is the tree digest (and InstallingRevision the revision) of a folder this sync is moving into
	// place, recorded before the rename: a sync that stops after the rename and before recording the result leaves
	// a folder the next sync still knows as its own, whatever was published since.
	Installing         string `json:"installing,omitempty"`
	InstallingRevision int64  `json:"installing_revision,omitempty"`
}

// afterInstall runs once a folder is renamed into place, before the state records it (tests stop a sync there).
var afterInstall = func(string) error { return nil }

func newSkillsCommand() *cobra.Command {
	f := &clientFlags{}
	cmd := group("skills", "Receive approved Experience as Agent Skills in a local skills folder",
		`  powercontext skills enroll --server https://pc.example --token pcse_… --dir ~/.claude/skills
  powercontext skills sync --dir ~/.claude/skills
  powercontext skills sync --dir ~/.claude/skills --watch`, f)
	cmd.AddCommand(newSkillsEnrollCommand(f), newSkillsSyncCommand(f))
	return cmd
}

func newSkillsEnrollCommand(f *clientFlags) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "enroll --server URL --token ENROLLMENT_TOKEN --dir PATH",
		Short: "Enroll this machine as a skill target with a one-time enrollment token",
		Long: `Spend the one-time enrollment token an operator got when registering this target (POST /v1/skill-targets):
the server answers with this target's own credential, which is kept in the skills folder's state file
(` + StateFile + `, mode 0600) together with the server URL. Then run "powercontext skills sync".`,
		Example: `  powercontext skills enroll --server https://pc.example --token pcse_… --dir ~/.claude/skills`,
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("dir", dir); err != nil {
				return err
			}
			if err := requireFlag("token", f.token); err != nil {
				return err
			}
			tok := f.token
			f.token = "" // the enrollment token is the request's body, never a bearer token
			s, err := f.connect()
			if err != nil {
				return err
			}
			if _, err := readSkillsState(dir); err == nil {
				return usageErrorf("%s is already enrolled (%s exists)", dir, StateFile)
			}
			en, err := s.c.EnrollSkillAgent(cmd.Context(), tok)
			if err != nil {
				return s.explain(err)
			}
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return err
			}
			st := skillsState{Server: s.c.BaseURL(), TargetID: en.TargetID, ScopeID: en.ScopeID, Cred: en.Credential,
				Skills: map[string]skillsStateEntry{}}
			if f.caFile != "" {
				// sync trusts the same bundle without being told again (--ca-file or the environment still win).
				if st.CAFile, err = filepath.Abs(f.caFile); err != nil {
					return err
				}
			}
			if err := writeSkillsState(dir, st); err != nil {
				return err
			}
			if s.json {
				return writeJSONLine(cmd.OutOrStdout(), []byte(fmt.Sprintf(`{"target_id":%q,"scope_id":%q,"dir":%q}`, en.TargetID, en.ScopeID, dir)))
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "enrolled target %s (scope %s) in %s\nnext: powercontext skills sync --dir %s\n",
				en.TargetID, en.ScopeID, dir, dir)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the agent's skills folder (required)")
	return cmd
}

func newSkillsSyncCommand(f *clientFlags) *cobra.Command {
	var dir string
	var watch bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "sync --dir PATH [--watch [--interval 30s]]",
		Short: "Bring the skills folder to the desired state and report it",
		Long: `Pull this target's desired state and bring the skills folder to it: a published skill is written to
<dir>/<name> atomically (the archive's digest and the tree digest are checked in a temporary folder, which then
replaces the old one); an unpublished one is removed. Only folders this sync created (listed in ` + StateFile + `) are
ever changed or removed: a folder edited since the sync wrote it is left as it is and reported as conflict, and a
folder of the same name the sync did not create is never touched — unless it holds exactly the desired revision,
which the sync then records as its own (as after a sync that stopped before writing its state file). What was
observed is reported for every skill.
An https:// server is checked against --ca-file, else $` + EnvCAFile + `, else the CA bundle enroll was given, else
the system's certificate authorities. With --watch the sync repeats every --interval until interrupted.`,
		Example: `  powercontext skills sync --dir ~/.claude/skills
  powercontext skills sync --dir ~/.claude/skills --watch --interval 1m`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("dir", dir); err != nil {
				return err
			}
			if every <= 0 {
				return usageErrorf("--interval must be positive")
			}
			st, err := readSkillsState(dir)
			if err != nil {
				return usageErrorf("%s is not enrolled: run \"powercontext skills enroll\" first (%v)", dir, err)
			}
			if f.server == "" {
				f.server = st.Server
			}
			if f.caFile == "" && os.Getenv(EnvCAFile) == "" {
				f.caFile = st.CAFile
			}
			s, err := f.connect(client.WithToken(st.Cred))
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if !watch {
				return s.explain(syncSkills(ctx, s.c, dir, &st, cmd.OutOrStdout()))
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			for {
				if err := syncSkills(ctx, s.c, dir, &st, cmd.OutOrStdout()); err != nil {
					var ae *client.APIError
					if errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403) {
						return s.explain(err) // revoked or unknown: watching longer cannot help
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "sync failed: %s\n", s.explainLine(err))
				}
				t := time.NewTimer(every)
				select {
				case <-ctx.Done():
					t.Stop()
					return nil
				case <-t.C:
				}
			}
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the agent's skills folder, as given to enroll (required)")
	cmd.Flags().BoolVar(&watch, "watch", false, "repeat until interrupted")
	cmd.Flags().DurationVar(&every, "interval", 30*time.Second, "time between syncs with --watch")
	return cmd
}

func readSkillsState(dir string) (skillsState, error) {
	var st skillsState
	b, err := os.ReadFile(filepath.Join(dir, StateFile)) //nolint:gosec // the folder the user named
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Cred == "" || st.Server == "" {
		return st, fmt.Errorf("%s is not a valid state file", StateFile)
	}
	if st.Skills == nil {
		st.Skills = map[string]skillsStateEntry{}
	}
	return st, nil
}

// writeSkillsState replaces the state file atomically (a temporary file renamed over it), mode 0600.
func writeSkillsState(dir string, st skillsState) error {
	b, err := json.MarshalIndent(st, "", "  ") //nolint:gosec // the agent's own credential, in a 0600 file (docs/skills.md)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".powercontext-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, StateFile))
}

// SkillsAgent is what a sync pass needs from the server: *client.Client with the agent's credential, or the
// single_node server's own host-local target (app).
type SkillsAgent interface {
	SkillDesired(ctx context.Context) (client.SkillDesiredState, error)
	SkillArchive(ctx context.Context, name string, revision int64, archiveDigest string) ([]byte, error)
	ReportSkill(ctx context.Context, name string, r client.SkillReport) (client.SkillPublication, error)
}

// SyncSkillsFolder runs one sync pass of dir for agent with the same rules as "powercontext skills sync", keeping
// its record of the folders it created in dir's state file (created when missing; it then holds no credential).
func SyncSkillsFolder(ctx context.Context, agent SkillsAgent, dir string, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	st := skillsState{Skills: map[string]skillsStateEntry{}}
	b, err := os.ReadFile(filepath.Join(dir, StateFile)) //nolint:gosec // the folder the operator configured
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("%s is not a valid state file", StateFile)
		}
		if st.Skills == nil {
			st.Skills = map[string]skillsStateEntry{}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return syncSkills(ctx, agent, dir, &st, out)
}

// localTree reads the regular files under root as a package tree; ok is false when root does not exist. A link or
// another special file makes the folder unlike any package (its digest then never matches).
func localTree(root string) (files []client.SkillFile, ok bool, err error) {
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			files = append(files, client.SkillFile{Path: filepath.ToSlash(rel), Content: []byte("\x00special")})
			return nil
		}
		b, err := os.ReadFile(path) //nolint:gosec // a file under the folder the user named
		if err != nil {
			return err
		}
		files = append(files, client.SkillFile{Path: filepath.ToSlash(rel), Content: b})
		return nil
	})
	return files, true, err
}

// install writes files to dir/name atomically: a temporary folder in dir is filled and checked against the tree
// digest, then renamed into place (the previous folder, one the sync created, is moved aside first and removed).
func install(dir, name string, files []client.SkillFile, treeDigest string) error {
	if client.SkillTreeDigest(files) != treeDigest {
		return errors.New("the archive's files do not match the tree digest")
	}
	tmp, err := os.MkdirTemp(dir, ".powercontext-new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Content, 0o600); err != nil {
			return err
		}
	}
	written, _, err := localTree(tmp)
	if err != nil {
		return err
	}
	if client.SkillTreeDigest(written) != treeDigest {
		return errors.New("the written folder does not match the tree digest")
	}
	target := filepath.Join(dir, name)
	if _, err := os.Lstat(target); err == nil {
		old, err := os.MkdirTemp(dir, ".powercontext-old-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(old)
		if err := os.Rename(target, filepath.Join(old, name)); err != nil {
			return err
		}
	}
	return os.Rename(tmp, target)
}

// syncSkills is one pass: for every skill of the desired state, act on the folder and report what it holds.
func syncSkills(ctx context.Context, c SkillsAgent, dir string, st *skillsState, out io.Writer) error {
	desired, err := c.SkillDesired(ctx)
	if err != nil {
		return err
	}
	sort.Slice(desired.Items, func(i, j int) bool { return desired.Items[i].SkillName < desired.Items[j].SkillName })
	for _, d := range desired.Items {
		line, rep, err := syncOne(ctx, c, dir, st, d)
		if err != nil {
			return err
		}
		if err := writeSkillsState(dir, *st); err != nil {
			return err
		}
		if _, err := c.ReportSkill(ctx, d.SkillName, rep); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s\n", d.SkillName, line)
	}
	return nil
}

func syncOne(ctx context.Context, c SkillsAgent, dir string, st *skillsState, d client.DesiredSkill) (string, client.SkillReport, error) {
	name := d.SkillName
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") {
		return "refused: not a valid folder name", client.SkillReport{ErrorCode: "invalid_name"}, nil
	}
	target := filepath.Join(dir, name)
	files, exists, err := localTree(target)
	if err != nil {
		return "", client.SkillReport{}, err
	}
	mine, ours := st.Skills[name]
	if ours && mine.Installing != "" { // the last sync stopped during an install: did the rename happen?
		if exists && client.SkillTreeDigest(files) == mine.Installing {
			mine = skillsStateEntry{Revision: mine.InstallingRevision, TreeDigest: mine.Installing}
		} else {
			mine.Installing, mine.InstallingRevision = "", 0
		}
		st.Skills[name] = mine
	}
	if ours && !exists {
		delete(st.Skills, name) // removed by hand: the sync no longer owns a folder there
		ours = false
	}
	edited := ours && client.SkillTreeDigest(files) != mine.TreeDigest
	if d.DesiredState != "published" {
		switch {
		case !ours:
			return "not installed", client.SkillReport{}, nil
		case edited:
			return "conflict: edited locally, not removed", client.SkillReport{ErrorCode: "conflict"}, nil
		}
		if err := os.RemoveAll(target); err != nil {
			return "", client.SkillReport{}, err
		}
		delete(st.Skills, name)
		return "removed", client.SkillReport{}, nil
	}
	if exists && d.TreeDigest != nil && client.SkillTreeDigest(files) == *d.TreeDigest {
		// The folder holds exactly the desired revision. When the state does not say so, a sync stopped after renaming
		// it into place and before recording it (or the folder is byte for byte what a sync would write): adopt it.
		line := fmt.Sprintf("current at revision %d", d.Revision)
		if !ours || mine.Revision != d.Revision || mine.TreeDigest != *d.TreeDigest {
			line = fmt.Sprintf("installed revision %d (the folder already held it)", d.Revision)
		}
		st.Skills[name] = skillsStateEntry{Revision: d.Revision, TreeDigest: *d.TreeDigest}
		return line, client.SkillReport{ObservedRevision: d.Revision, ObservedTreeDigest: *d.TreeDigest}, nil
	}
	switch {
	case exists && !ours:
		return "conflict: a folder of that name exists that this sync did not create; left untouched",
			client.SkillReport{ErrorCode: "conflict"}, nil
	case edited:
		return "conflict: edited locally, not overwritten", client.SkillReport{ErrorCode: "conflict"}, nil
	case d.TreeDigest == nil || d.ArchiveDigest == nil:
		return "delivery failed: no digest", client.SkillReport{ErrorCode: "missing_digest"}, nil
	}
	archive, err := c.SkillArchive(ctx, name, d.Revision, *d.ArchiveDigest)
	if err != nil {
		var ae *client.APIError
		if errors.As(err, &ae) {
			return "", client.SkillReport{}, err
		}
		return "delivery failed: " + err.Error(), client.SkillReport{ErrorCode: "download_failed"}, nil
	}
	pkg, err := client.ReadSkillArchive(archive)
	if err != nil {
		return "delivery failed: " + err.Error(), client.SkillReport{ErrorCode: "invalid_archive"}, nil
	}
	// The intent first (docs/skills.md#syncing-a-skills-folder): a folder of this digest is ours even if the sync stops right after
	// the rename.
	intent := mine
	intent.Installing, intent.InstallingRevision = *d.TreeDigest, d.Revision
	st.Skills[name] = intent
	if err := writeSkillsState(dir, *st); err != nil {
		return "", client.SkillReport{}, err
	}
	if err := install(dir, name, pkg, *d.TreeDigest); err != nil {
		return "delivery failed: " + err.Error(), client.SkillReport{ErrorCode: "write_failed"}, nil
	}
	if err := afterInstall(name); err != nil {
		return "", client.SkillReport{}, err
	}
	st.Skills[name] = skillsStateEntry{Revision: d.Revision, TreeDigest: *d.TreeDigest}
	return fmt.Sprintf("installed revision %d", d.Revision), client.SkillReport{ObservedRevision: d.Revision, ObservedTreeDigest: *d.TreeDigest}, nil
}
