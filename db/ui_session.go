package db

import (
	"context"
)

// UISessionQueries are the statements of pc_ui_sessions: dashboard sessions (docs/security.md#dashboard-sessions), keyed by the SHA-256 (hex) of the session id (sql/queries/<engine>/ui_session.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type UISessionQueries interface {
	// UISessionDelete removes the session of digest (logout). Returns rows deleted.
	UISessionDelete(ctx context.Context, sessionDigest string) (int64, error)

	// UISessionGetUnexpired is the session of digest if it has not expired on the database clock; db.ErrNotFound
	// otherwise. One primary-key read.
	UISessionGetUnexpired(ctx context.Context, sessionDigest string) (UISession, error)

	// UISessionInsert stores a new session; db.ErrConflict when the digest exists.
	UISessionInsert(ctx context.Context, s UISession) error

	// UISessionPurgeExpired deletes at most p.Limit sessions that expired before p.ExpiredBefore, oldest first.
	// Returns rows deleted.
	UISessionPurgeExpired(ctx context.Context, p UISessionPurgeExpiredParams) (int64, error)
}
