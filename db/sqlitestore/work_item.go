package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) WorkItemClaimCandidates(ctx context.Context, p db.WorkItemClaimCandidatesParams) ([]db.ClaimCandidate, error) {
	kinds, err := kindsJSON(p.Kinds)
	if err != nil {
		return nil, err
	}
	rs, err := q.r.WorkItemClaimCandidates(ctx, sqlitegen.WorkItemClaimCandidatesParams{KindsJson: kinds, Limit: p.Limit})
	return conv.Many(errs, rs, err, conv.ClaimCandidateFromGen)
}

// WorkItemList passes absent filters and an absent keyset position as NULL.
func (q *queries) WorkItemList(ctx context.Context, p db.WorkItemListParams) ([]db.WorkItem, error) {
	kinds, err := kindsJSON(p.Kinds)
	if err != nil {
		return nil, err
	}
	arg := sqlitegen.WorkItemListParams{
		KindsJson:    kinds,
		ScopeID:      conv.TextToGen(p.ScopeID),
		Status:       conv.TextToGen(p.Status),
		BeforeWorkID: p.BeforeWorkID,
		Limit:        p.Limit,
	}
	if !p.BeforeCreatedAt.IsZero() {
		before := conv.TimeToGen[int64](p.BeforeCreatedAt)
		arg.BeforeCreatedAt = &before
	}
	rs, err := q.r.WorkItemList(ctx, arg)
	return conv.Many(errs, rs, err, conv.WorkItemFromGen)
}

// kindsJSON encodes kinds as the JSON array the queries read with json_each (sqlc.slice cannot sit beside named
// parameters on SQLite).
func kindsJSON(kinds []string) (string, error) {
	if kinds == nil {
		kinds = []string{}
	}
	b, err := json.Marshal(kinds)
	if err != nil {
		return "", fmt.Errorf("sqlitestore: encode kinds: %w", err)
	}
	return string(b), nil
}
