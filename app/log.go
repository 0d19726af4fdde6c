package app

import (
	"io"
	"time"

	"github.com/rs/zerolog"
)

// NewLogger builds the one root logger: JSON by default, console for humans. Messages are constant and lower-case;
// ids go in fields; content never does.
func NewLogger(format, level string, w io.Writer) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	if format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}
