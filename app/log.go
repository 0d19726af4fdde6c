package app

import (
	"io"
	stdlog "log"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/internal/clock"
)

// zerologGlobals guards zerolog's package-level time settings.
var zerologGlobals sync.Once

// NewLogger builds the one root logger: JSON by default, console for humans. Messages are constant and lower-case;
// ids go in fields; content never does.
func NewLogger(format, level string, w io.Writer) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	zerologGlobals.Do(func() {
		// zerolog keeps these as package globals read by every logger; set them once so a second runtime in the
		// same process (tests, the copy command) does not race loggers that are already writing.
		zerolog.TimeFieldFormat = time.RFC3339Nano
		zerolog.TimestampFunc = clock.Now // log times are wall-clock values (internal/clock)
	})
	if format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// HTTPErrorLog routes net/http's own error lines (TLS handshake failures, accept errors, a handler's superfluous
// WriteHeader, a panic that escaped every middleware) into the JSON log as warnings with a bounded class. The
// line's text is kept (bounded) except for panics, whose value could carry request data.
func HTTPErrorLog(log zerolog.Logger) *stdlog.Logger {
	return stdlog.New(httpErrorWriter{log: log.With().Str("component", "net/http").Logger()}, "", 0)
}

type httpErrorWriter struct{ log zerolog.Logger }

const maxHTTPErrorText = 300

func (w httpErrorWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	class := "other"
	for _, c := range []struct{ prefix, class string }{
		{"http: TLS handshake error", "tls_handshake"},
		{"http: Accept error", "accept"},
		{"http: panic serving", "panic"},
		{"http: superfluous response.WriteHeader", "superfluous_write_header"},
		{"http: response.Write on hijacked", "write_after_hijack"},
		{"http2:", "http2"},
	} {
		if strings.HasPrefix(line, c.prefix) {
			class = c.class
			break
		}
	}
	ev := w.log.Warn().Str("class", class)
	if class != "panic" {
		if len(line) > maxHTTPErrorText {
			line = line[:maxHTTPErrorText]
		}
		ev = ev.Str("detail", strings.ToValidUTF8(line, string(utf8.RuneError)))
	}
	ev.Msg("http server error")
	return len(p), nil
}
