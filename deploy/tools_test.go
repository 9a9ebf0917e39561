package deploy_test

import (
	"os"
	"os/exec"
	"testing"
)

// needTool skips the test where the tool (a Debian package) is not
// installed, saying what it would have done; under CI it fails instead:
// .ci/run installs the tool, and a skip there would pass what never ran.
func needTool(t *testing.T, tool, without string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed, and CI must run this test: %v", tool, err)
		}
		t.Skipf("%s is not installed (Debian: apt-get install %s; .ci/run installs it): %s", tool, tool, without)
	}
}
