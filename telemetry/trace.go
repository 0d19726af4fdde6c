package telemetry

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/powercontext/powercontext/coordinator"
)

// ErrUnsupportedOTLPProtocol refuses an OTLP protocol other than http/protobuf (the only exporter linked in).
var ErrUnsupportedOTLPProtocol = errors.New("telemetry: only the http/protobuf OTLP protocol is supported (OTEL_EXPORTER_OTLP_PROTOCOL)")

// tracingFromEnv decides whether spans are exported: OTEL_SDK_DISABLED=true turns it off; OTEL_TRACES_EXPORTER=otlp
// turns it on, any other value (none, console, …) off; unset, an OTLP endpoint turns it on.
func tracingFromEnv(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	on := false
	switch exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "otlp":
		on = true
	case "":
		on = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" || strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != ""
	}
	if !on {
		return false, nil
	}
	proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if proto != "" && proto != "http/protobuf" {
		return false, ErrUnsupportedOTLPProtocol
	}
	return true, nil
}

func newTracerProvider(ctx context.Context, cfg Config, log zerolog.Logger) (*sdktrace.TracerProvider, bool, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithIDGenerator(idGenerator{})}
	on := false
	switch {
	case cfg.SpanExporter != nil:
		on = true
		opts = append(opts, sdktrace.WithSyncer(cfg.SpanExporter), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	default:
		var err error
		if on, err = tracingFromEnv(getenv); err != nil {
			return nil, false, err
		}
		if on {
			exp, err := otlptracehttp.New(ctx)
			if err != nil {
				return nil, false, err
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		} else {
			opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
		}
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "powercontext"),
			attribute.String("service.version", cfg.ServiceVersion),
			attribute.String("service.instance.id", cfg.InstanceID)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err == nil {
		opts = append(opts, sdktrace.WithResource(res))
	}
	if on {
		// Export errors go to the root logger (bounded class only), not to the standard library's log.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("telemetry export error")
		}))
	}
	return sdktrace.NewTracerProvider(opts...), on, nil
}

// fixedIDsKey carries ids a new root span must take (the attempt's stored ids).
type fixedIDsKey struct{}

type fixedIDs struct {
	traceID trace.TraceID
	spanID  trace.SpanID
}

// withRootIDs makes the next new root span started from ctx take exactly these ids. Only the span's own start
// sees them: callers hand children a context derived from the original ctx, not this one.
func withRootIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID) context.Context {
	return context.WithValue(ctx, fixedIDsKey{}, fixedIDs{tid, sid})
}

// idGenerator is random, except that a root span started from a withRootIDs context takes the planted ids. The
// SDK asks NewIDs only for root spans (no valid parent), so children are unaffected.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if f, ok := ctx.Value(fixedIDsKey{}).(fixedIDs); ok && f.traceID.IsValid() && f.spanID.IsValid() {
		return f.traceID, f.spanID
	}
	return randomTraceID(), randomSpanID()
}

func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return randomSpanID() }

func randomTraceID() trace.TraceID {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// NewTrace returns fresh ids for an attempt's execution span, as stored on the attempt row (32 and 16 lowercase
// hex). It is coordinator.WorkerHooks.NewTrace.
func NewTrace() (traceID, spanID string) {
	return randomTraceID().String(), randomSpanID().String()
}

// spanContextFromHex parses stored ids; ok is false when they are absent or malformed.
func spanContextFromHex(traceID, spanID string, remote bool) (trace.SpanContext, bool) {
	tid, err := trace.TraceIDFromHex(traceID)
	if err != nil {
		return trace.SpanContext{}, false
	}
	sid, err := trace.SpanIDFromHex(spanID)
	if err != nil {
		return trace.SpanContext{}, false
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, Remote: remote}), true
}
