package testkit

import (
	"os"
	"testing"
)

// RedisURL returns the Redis server for tests (PIXGATE_TEST_REDIS_URL, as
// .ci/run exports it). Without it the test is skipped — or fails when
// CI=true, so CI cannot silently skip what needs Redis.
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("PIXGATE_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PIXGATE_TEST_REDIS_URL is not set; CI requires Redis")
		}
		t.Skip("PIXGATE_TEST_REDIS_URL is not set")
	}
	return u
}
