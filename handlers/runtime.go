package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/coordinator"
)

const readinessTimeout = 5 * time.Second

func (s *server) live(c echo.Context) error {
	return health(c, http.StatusOK, map[string]string{"status": "live"})
}

// health answers a probe: the JSON body on GET, the status alone on HEAD.
func health(c echo.Context, code int, body any) error {
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		return c.NoContent(code)
	}
	return c.JSON(code, body)
}

func (s *server) ready(c echo.Context) error {
	if err := s.spendProbe(c); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readinessTimeout)
	defer cancel()
	var status string
	var checks map[string]any
	if s.d.Readiness != nil {
		status, checks = s.d.Readiness(ctx)
	} else {
		status, checks = s.defaultReadiness(ctx)
	}
	if checks == nil {
		checks = map[string]any{}
	}
	code := http.StatusOK
	if status != coordinator.ReadyReady && status != coordinator.ReadyDegraded {
		code = http.StatusServiceUnavailable
	}
	return health(c, code, types.Health{Status: status, Checks: checks})
}

// defaultReadiness: the database answers and live members agree (coordinator.MembershipCheck).
func (s *server) defaultReadiness(ctx context.Context) (string, map[string]any) {
	if s.d.Store == nil {
		return coordinator.ReadyNotReady, map[string]any{"database": "unconfigured"}
	}
	members, err := coordinator.LiveMembers(ctx, s.d.Store)
	if err != nil {
		return coordinator.ReadyNotReady, map[string]any{"database": "unreachable"}
	}
	role := s.d.Role
	if role == "" {
		role = "all"
	}
	state, reason := coordinator.MembershipCheck(members, role)
	return state, map[string]any{"database": "ok", "membership": reason}
}

func (s *server) listMembers(c echo.Context) error {
	if s.d.Store == nil {
		return notReady("runtime membership")
	}
	ms, err := coordinator.LiveMembers(c.Request().Context(), s.d.Store)
	if err != nil {
		return err
	}
	out := types.MemberList{Items: make([]types.Member, 0, len(ms))}
	for _, m := range ms {
		out.Items = append(out.Items, types.Member{MemberID: m.MemberID, Role: m.Role, BuildVersion: m.BuildVersion,
			SchemaVersions:   types.VersionRange{Min: m.SchemaMin, Max: m.SchemaMax},
			PayloadVersions:  types.VersionRange{Min: int64(m.PayloadMin), Max: int64(m.PayloadMax)},
			BehaviorRevision: m.BehaviorRevision, StartedAt: apiTime(m.StartedAt), HeartbeatAt: apiTime(m.HeartbeatAt),
			ExpiresAt: apiTime(m.ExpiresAt)})
	}
	return c.JSON(http.StatusOK, out)
}
