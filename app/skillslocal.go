package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/skills"
)

// Host-local target (docs/skills.md#host-local-target): a single_node server configured with
// POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR registers, once, a target of kind host_local in the configured scope and keeps
// that folder in sync itself, with the same rules as "powercontext skills sync". Revoking the target stops it.
const (
	localTargetKind     = "host_local"
	localTargetName     = "this server's host"
	localTargetInterval = 30 * time.Second
)

// localAgent is the host-local target as a cli.SkillsAgent: the server acts for its own target directly.
type localAgent struct {
	svc    skills.Service
	target db.SkillTarget
}

func (a localAgent) SkillDesired(ctx context.Context) (client.SkillDesiredState, error) {
	ds, err := a.svc.Desired(ctx, a.target)
	if err != nil {
		return client.SkillDesiredState{}, err
	}
	out := client.SkillDesiredState{TargetID: a.target.TargetID}
	for _, d := range ds {
		item := client.DesiredSkill{SkillName: d.Name, DesiredState: d.DesiredState, Revision: d.Revision, State: d.State, Generation: d.Generation}
		if d.TreeDigest != "" {
			tree, archive := d.TreeDigest, d.ArchiveDigest
			item.TreeDigest, item.ArchiveDigest = &tree, &archive
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}

func (a localAgent) SkillArchive(ctx context.Context, name string, revision int64, archiveDigest string) ([]byte, error) {
	r, err := a.svc.Archive(ctx, a.target, name, revision)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(r.Archive)
	if hex.EncodeToString(sum[:]) != archiveDigest {
		return nil, fmt.Errorf("archive of revision %d does not match its digest", revision)
	}
	return r.Archive, nil
}

func (a localAgent) ReportSkill(ctx context.Context, name string, r client.SkillReport) (client.SkillPublication, error) {
	_, err := a.svc.Report(ctx, a.target, name, skills.Report{ObservedRevision: r.ObservedRevision,
		ObservedTreeDigest: r.ObservedTreeDigest, ErrorCode: r.ErrorCode})
	return client.SkillPublication{}, err
}

// LocalSkillsTarget returns the host-local target of scope, registering and enrolling it the first time (the
// credential is not kept: the server needs none to act for its own target).
func LocalSkillsTarget(ctx context.Context, store db.Store, scope string) (db.SkillTarget, error) {
	svc := skills.Service{Store: store}
	targets, err := svc.Targets(ctx, scope, 500)
	if err != nil {
		return db.SkillTarget{}, err
	}
	for _, t := range targets {
		if t.AgentKind == localTargetKind {
			return t, nil
		}
	}
	_, tok, err := svc.RegisterTarget(ctx, scope, localTargetKind, localTargetName)
	if err != nil {
		return db.SkillTarget{}, err
	}
	t, _, err := svc.Enroll(ctx, tok)
	return t, err
}

// errLocalTargetRevoked: the host-local target was revoked; the folder is no longer kept.
var errLocalTargetRevoked = errors.New("the host-local skills target is revoked")

// SyncLocalSkills runs one sync pass of the host-local target of scope into dir.
func SyncLocalSkills(ctx context.Context, store db.Store, scope, dir string, out io.Writer) error {
	t, err := LocalSkillsTarget(ctx, store, scope)
	if err != nil {
		return err
	}
	if !t.RevokedAt.IsZero() {
		return errLocalTargetRevoked
	}
	return cli.SyncSkillsFolder(ctx, localAgent{svc: skills.Service{Store: store}, target: t}, dir, out)
}

// keepLocalSkills runs SyncLocalSkills every localTargetInterval until ctx ends; a failed pass is logged (its error
// class, never content) and the next one tries again.
func (r *Runtime) keepLocalSkills(ctx context.Context) error {
	for {
		if err := SyncLocalSkills(ctx, r.store, r.cfg.SkillsLocalTargetScope, r.cfg.SkillsLocalTargetDir, io.Discard); err != nil && ctx.Err() == nil {
			r.log.Warn().Str("error_type", fmt.Sprintf("%T", err)).Bool("revoked", errors.Is(err, errLocalTargetRevoked)).
				Msg("host-local skills sync failed")
		}
		t := time.NewTimer(localTargetInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}
