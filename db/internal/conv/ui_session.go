package conv

import (
	"github.com/powercontext/powercontext/db"
)

type uiSession[T Time] = struct {
	SessionDigest    string
	PrincipalName    string
	PrincipalBinding string
	CreatedAt        T
	ExpiresAt        T
}

// UISessionFromGen converts a pc_ui_sessions row.
func UISessionFromGen[T Time, R ~uiSession[T]](g R) db.UISession {
	r := uiSession[T](g)
	return db.UISession{
		SessionDigest:    r.SessionDigest,
		PrincipalName:    r.PrincipalName,
		PrincipalBinding: r.PrincipalBinding,
		CreatedAt:        TimeFromGen(r.CreatedAt),
		ExpiresAt:        TimeFromGen(r.ExpiresAt),
	}
}

// UISessionToGen builds the parameters of UISessionInsert.
func UISessionToGen[P ~uiSession[T], T Time](s db.UISession) P {
	return P(uiSession[T]{
		SessionDigest:    s.SessionDigest,
		PrincipalName:    s.PrincipalName,
		PrincipalBinding: s.PrincipalBinding,
		CreatedAt:        TimeToGen[T](s.CreatedAt),
		ExpiresAt:        TimeToGen[T](s.ExpiresAt),
	})
}
