package telemetry

import (
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HTTPMiddleware returns the request metrics and server spans of e. Install it with e.Pre after every route is
// registered (app does `e.Pre(tel.HTTPMiddleware(e))`): as a pre-middleware it is the outermost layer, so it sees
// the status the error handler finally sent, and it reads the route template Echo matched after routing. The route
// label is a template registered on e or "unmatched" — never the raw path. /health/* and /metrics are counted but
// not traced.
func (t *Telemetry) HTTPMiddleware(e *echo.Echo) echo.MiddlewareFunc {
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		routes[r.Path] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			start := time.Now()
			method := methodLabel(req.Method)
			var span trace.Span
			if traced(req.URL.Path) {
				ctx := t.prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
				ctx, span = t.tracer.Start(ctx, "HTTP "+method, trace.WithSpanKind(trace.SpanKindServer),
					trace.WithAttributes(attribute.String("http.request.method", method)))
				c.SetRequest(req.WithContext(ctx))
			}
			if err := next(c); err != nil {
				c.Error(err) // commit the status now so it is the one measured
			}
			route := RouteUnmatched
			if p := c.Path(); routes[p] {
				route = p
			}
			status := c.Response().Status
			class := statusClass(status)
			d := time.Since(start).Seconds()
			t.m.httpRequests.WithLabelValues(route, method, class).Inc()
			t.m.httpDuration.WithLabelValues(route, method, class).Observe(d)
			if span != nil {
				span.SetName(method + " " + route)
				span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
				if status >= 500 {
					span.SetStatus(codes.Error, class)
				}
				span.End()
			}
			return nil
		}
	}
}

func traced(path string) bool { return !strings.HasPrefix(path, "/health/") && path != "/metrics" }
