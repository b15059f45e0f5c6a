// Package chromium starts a headless Chromium for browser tests (chromedp).
// It is apart from testkit so that only the tests that drive a browser link
// chromedp.
package chromium

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// PathEnv names the environment variable that overrides where the
// Chromium binary is (default /usr/bin/chromium, Debian's package).
const PathEnv = "CHROMIUM_PATH"

// Path returns the Chromium binary to run, or "" when there is none.
func Path() string {
	p := os.Getenv(PathEnv)
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if lp, err := exec.LookPath(p); err == nil {
			return lp
		}
		return ""
	}
	return p
}

// Launch starts a headless Chromium with a fresh profile for the test and
// returns a context whose chromedp actions run in its first tab; further
// tabs, or isolated browser contexts (separate cookie jars), are children of
// it made with chromedp.NewContext. The browser is stopped when the test
// ends, or after timeout. Without a Chromium binary the test fails when CI
// is "true" and is skipped otherwise.
func Launch(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium at /usr/bin/chromium or $" + PathEnv + "; CI requires it")
		}
		t.Skip("no Chromium at /usr/bin/chromium or $" + PathEnv + "; skipping browser test (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox, // required as root; the tests open only pages they serve
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("lang", "pt-BR"),
	}
	base, cancelTimeout := context.WithTimeout(context.Background(), timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	// Start the browser now, so a launch failure is reported as such.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("chromium: start %s: %v", path, err)
	}
	return ctx
}

// Isolated returns a new tab of the browser of parent in its own
// browser context: it shares no cookies or storage with other tabs. It is
// closed when the test ends.
func Isolated(t testing.TB, parent context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("chromium: new browser context: %v", err)
	}
	return ctx
}
