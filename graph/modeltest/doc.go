// Package modeltest is the randomized model-based test of the whole server:
// thousands of random mutations by several users, partly concurrent, some
// made to fail, through the real handler on a fresh embedded table; then a
// whole-table invariant check (no orphan, every copy and index key in step)
// and the seven access patterns against an in-memory model of what each
// user may see. Its code is its tests (go test ./graph/modeltest); the
// longer run: go test ./graph/modeltest -run 'TestModel$' -args -model.n=5000.
package modeltest
