// Package browsertest gives tests a headless Chromium to look at pages as a
// person would: one browser per test package, started on first use, a tab
// per test, and screenshots in the repository's git-ignored .screenshots/
// folder for people to look at.
//
// Without a browser the tests that need one are skipped with a message
// saying how to install it, except when CI=true: then they fail, because CI
// installs Chromium (see .ci/run).
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Width and Height are the window's size, and so the screenshots'.
const (
	Width  = 1400
	Height = 1000
)

var (
	mu       sync.Mutex
	browser  context.Context // nil until started
	shutdown []func()
	startErr error
)

// Find returns the path of Chromium: $CHROMIUM when set, else the first of
// chromium, chromium-browser, google-chrome on PATH.
func Find() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: install Debian's chromium package (apt-get install chromium) or set CHROMIUM to a Chrome binary")
}

// Main runs a package's tests, then closes its browser. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	for i := len(shutdown) - 1; i >= 0; i-- {
		shutdown[i]()
	}
	mu.Unlock()
	os.Exit(code)
}

// Tab opens a tab in the package's browser for one test; it closes when
// the test ends. Everything done in it is bounded by five minutes, far
// beyond what a busy machine needs: the bound only ends a test whose page
// never does what it waits for.
func Tab(t *testing.T) context.Context {
	t.Helper()
	b, err := start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser test under CI: %v", err)
		}
		t.Skipf("skipping a browser test: %v", err)
	}
	tab, closeTab := chromedp.NewContext(b)
	ctx, cancel := context.WithTimeout(tab, 5*time.Minute)
	t.Cleanup(func() { cancel(); closeTab() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(Width, Height)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

func start() (context.Context, error) {
	mu.Lock()
	defer mu.Unlock()
	if browser != nil || startErr != nil {
		return browser, startErr
	}
	path, err := Find()
	if err != nil {
		startErr = err
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agentruns-chromium-")
	if err != nil {
		startErr = err
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(Width, Height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Do(b); err != nil {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(dir)
		startErr = fmt.Errorf("starting %s: %w", path, err)
		return nil, startErr
	}
	browser = b
	shutdown = append(shutdown, func() { _ = os.RemoveAll(dir) }, cancelAlloc, cancelBrowser)
	return browser, nil
}

// Screenshot saves what the tab shows as .screenshots/<name>.png at the
// repository's root (or in $AGENTRUNS_SCREENSHOTS) and returns the path.
func Screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("AGENTRUNS_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), ".screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot folder: %v", err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Do runs actions in the tab, failing the test on an error.
func Do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression in the tab.
func Eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// WaitFor waits until a JavaScript expression is true in the tab, for up
// to two minutes: a condition, not a time; the bound only ends the wait on
// a page that never gets there.
func WaitFor(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("waiting until %s: %v", expr, err)
	}
}

// Text is the visible text of the first element the CSS selector matches.
func Text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return v
}

// repoRoot is the folder holding go.mod, above the test's working folder.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
