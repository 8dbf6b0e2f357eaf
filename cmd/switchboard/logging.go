package main

import (
	"io"
	"log/slog"
	"strings"
)

// newLogger returns the JSON-lines logger on stderr, at the level SWITCHBOARD_LOG names.
func newLogger(w io.Writer, getenv func(string) string) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(getenv("SWITCHBOARD_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}
