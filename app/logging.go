package app

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Logger returns the logger c asks for, of the server and the commands:
// text or JSON lines (-log-format) on w, from the given level on
// (-log-level).
func (c Config) Logger(w io.Writer) (*slog.Logger, error) {
	format, level := c.LogFormat, c.LogLevel
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil || !validLevel(level) {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	o := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", format)
}

// validLevel admits the four level names only (slog would also take
// offsets such as info+2).
func validLevel(level string) bool {
	switch strings.ToLower(level) {
	case "debug", "info", "warn", "error":
		return true
	}
	return false
}
