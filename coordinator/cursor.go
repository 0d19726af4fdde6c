package coordinator

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/db"
)

// EncodeListCursor is the opaque keyset position after w in List's order (created_at DESC, work_id DESC):
// base64url("<created_at µs>:<work_id>"). The admin-only dashboard pages with it; the Operation API seals its
// cursors instead (handlers/opcursor.go), since they reach scope-limited tokens.
func EncodeListCursor(w db.WorkItem) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(w.CreatedAt.UnixMicro(), 10) + ":" + w.WorkID))
}

// DecodeListCursor reads a cursor made by EncodeListCursor; ok is false for anything malformed.
func DecodeListCursor(s string) (createdAt time.Time, workID string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return time.Time{}, "", false
	}
	ts, id, found := strings.Cut(string(raw), ":")
	if !found {
		return time.Time{}, "", false
	}
	us, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || us <= 0 {
		return time.Time{}, "", false
	}
	if u, err := uuid.Parse(id); err != nil || len(id) != 36 || u.String() != strings.ToLower(id) {
		return time.Time{}, "", false
	}
	return time.UnixMicro(us).UTC(), id, true
}
