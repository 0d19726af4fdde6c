package db

import (
	"context"
	"time"
)

// RuntimeMemberQueries are the statements of pc_runtime_members: runtime membership (sql/queries/<engine>/runtime_member.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type RuntimeMemberQueries interface {
	RuntimeMemberDelete(ctx context.Context, memberID string) (int64, error)
	RuntimeMemberListLive(ctx context.Context, now time.Time) ([]RuntimeMember, error)

	// RuntimeMemberPurgeExpired deletes at most p.Limit member rows that expired before p.ExpiredBefore, oldest
	// first. Returns rows deleted.
	RuntimeMemberPurgeExpired(ctx context.Context, p RuntimeMemberPurgeExpiredParams) (int64, error)
	RuntimeMemberUpsert(ctx context.Context, m RuntimeMember) error
}
