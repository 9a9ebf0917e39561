//go:build image

package deploy_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The image builds (make image, with podman) and the binaries in it start
// and answer. This sandbox lets podman build but refuses podman run, so the
// test exports the image's file system (podman create, then podman export)
// and runs the binaries out of that tree on loopback: the very files the
// image holds, started as the image's entry point and health check would.
// podman keeps its storage in the test's temporary folder (the vfs driver,
// which needs no kernel support), so nothing is left behind.
//
// Behind the image build tag, run by `make test-image`: its first run
// compiles every dependency again, static (CGO_ENABLED=0), minutes on two
// cores; see the Makefile.
func TestImageBinariesStartAndAnswer(t *testing.T) {
	needTool(t, "podman", "the image cannot be built here")
	dir := t.TempDir()
	// podman wants a run folder of at most 50 characters; t.TempDir's
	// names are longer.
	short, err := os.MkdirTemp("", "img")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(short) })
	engine := "podman --root " + filepath.Join(dir, "root") + " --runroot " + filepath.Join(short, "run") + " --storage-driver vfs"
	podman := func(args ...string) string {
		t.Helper()
		all := append(strings.Fields(engine)[1:], args...)
		out, err := exec.Command("podman", all...).CombinedOutput()
		require.NoError(t, err, "podman %s: %s", strings.Join(args, " "), out)
		return strings.TrimSpace(string(out))
	}
	tag := "localhost/agentruns-test:" + randomHex(4)
	build := exec.Command("make", "-C", "..", "image", "CONTAINER_ENGINE="+engine, "IMAGE="+tag)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "make image: %s", out)
	t.Cleanup(func() { _ = exec.Command("podman", append(strings.Fields(engine)[1:], "rmi", "-f", tag)...).Run() })

	// What the image says of itself.
	var config struct {
		User         string
		ExposedPorts map[string]any
		Entrypoint   []string
		Cmd          []string
	}
	var health struct{ Test []string }
	require.NoError(t, json.Unmarshal([]byte(podman("image", "inspect", "--format", "{{json .Config}}", tag)), &config))
	// The OCI configuration has no health check: podman shows Docker's
	// apart.
	require.NoError(t, json.Unmarshal([]byte(podman("image", "inspect", "--format", "{{json .Config.Healthcheck}}", tag)), &health))
	assert.Equal(t, "65532:65532", config.User, "an unprivileged user")
	assert.Contains(t, config.ExposedPorts, "4010/tcp")
	assert.Equal(t, []string{"/usr/local/bin/agentruns-mock"}, config.Entrypoint)
	assert.Equal(t, []string{"--addr", "0.0.0.0:4010"}, config.Cmd)
	require.NotEmpty(t, health.Test, "a health check")

	// Its file system, exported and unpacked.
	id := podman("create", tag)
	t.Cleanup(func() { _ = exec.Command("podman", append(strings.Fields(engine)[1:], "rm", "-f", id)...).Run() })
	tarball := filepath.Join(dir, "image.tar")
	podman("export", "-o", tarball, id)
	root := filepath.Join(dir, "fs")
	unpack(t, tarball, root)
	for _, f := range []string{"usr/local/bin/agentruns-mock", "usr/local/bin/agentruns-contract", "etc/ssl/certs/ca-certificates.crt"} {
		require.FileExists(t, filepath.Join(root, f))
	}
	mock := filepath.Join(root, "usr/local/bin/agentruns-mock")
	contract := filepath.Join(root, "usr/local/bin/agentruns-contract")

	// The mock, as the entry point starts it but on a loopback port the
	// system picks; it names its URL once it listens.
	srv := exec.Command(mock, "--addr", "127.0.0.1:0", "--quiet", "--control-token", "ctl-"+randomHex(8))
	stderr, err := srv.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	url := listeningURL(t, stderr)

	// The health check, as the image runs it: the document needs neither a
	// key nor the control token.
	hc := health.Test[1:] // after "CMD"
	require.Equal(t, "/usr/local/bin/agentruns-mock", hc[0])
	args := append([]string(nil), hc[1:]...)
	args[len(args)-1] = url + "/openapi.yaml"
	out, err = exec.Command(mock, args...).CombinedOutput()
	require.NoError(t, err, "the health check: %s", out)

	// The API answers a key.
	req, err := http.NewRequest(http.MethodGet, url+"/agent/runs?limit=1", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The suite in the image runs against it: the read-only scenarios,
	// which need no control token.
	out, err = exec.Command(contract, "--base-url", url, "--api-key", "wk-mock-alice", "--read-only", "--format", "progress").CombinedOutput()
	require.NoError(t, err, "agentruns-contract from the image: %s", out)
	assert.Contains(t, string(out), "passed")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// listeningURL reads the mock's log until its start-up line and returns
// the URL it names; the rest of the log is drained.
func listeningURL(t *testing.T, log io.Reader) string {
	t.Helper()
	sc := bufio.NewScanner(log)
	var seen bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		if _, rest, ok := strings.Cut(line, " url="); ok && strings.Contains(line, "listening") {
			go func() { _, _ = io.Copy(io.Discard, log) }()
			return strings.Fields(rest)[0]
		}
	}
	require.FailNow(t, "the mock exited before it listened", seen.String())
	return ""
}

// unpack writes the regular files and folders of a tar file under root.
func unpack(t *testing.T, tarball, root string) {
	t.Helper()
	f, err := os.Open(tarball)
	require.NoError(t, err)
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		name := filepath.Join(root, filepath.FromSlash(h.Name))
		require.True(t, strings.HasPrefix(name, root+string(filepath.Separator)), "a path outside the tree: %s", h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(name, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
			w, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			require.NoError(t, err)
			_, err = io.Copy(w, tr)
			require.NoError(t, err)
			require.NoError(t, w.Close())
		}
	}
}
