// Package sizes keeps the module's hand-written Go in sizes a reader can
// hold: no file over 400 lines, no function over 100 (tests and generated
// code apart). A file over them is split by concern, not cut in half. Its
// code is its tests (go test ./internal/sizes).
package sizes
