package e2e

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests from the repository's root, where a user types
// go run .: they read README.md, docs/, clients/ and node_modules/ by those
// paths, and build the server from ".".
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
