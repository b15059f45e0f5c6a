package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestKillCycleJob kills a real server with SIGKILL at random moments while
// its cycle job creates the first cycle of many approved recurrences, and
// restarts it each time; then every recurrence has its first cycle's
// charge exactly once, due on its start date, and its calendar stands at
// the second cycle: no cycle lost to a crash between the charge's
// creation and the calendar's move, none created twice.
func TestKillCycleJob(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		flags := []string{"--rate-limit", "1000000"}
		p := startProc(t, dbURL, flags...)
		c := testkit.DecodeOne(t, p.stdout.String(), testkit.ServeKeys...)
		client := &http.Client{Timeout: 10 * time.Second}
		call := func(method, path string, body any) (int, map[string]any, error) {
			var rd *strings.Reader
			if body != nil {
				raw, err := json.Marshal(body)
				if err != nil {
					return 0, nil, err
				}
				rd = strings.NewReader(string(raw))
			} else {
				rd = strings.NewReader("")
			}
			req, err := http.NewRequest(method, "http://"+p.addr+path, rd)
			if err != nil {
				return 0, nil, err
			}
			req.Header.Set("stpi", c.ClientID)
			req.Header.Set("stps", c.ClientSecret)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return 0, nil, err
			}
			defer resp.Body.Close()
			var out map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return resp.StatusCode, nil, err
			}
			return resp.StatusCode, out, nil
		}

		// Start dates 3 to 9 days ahead: every first cycle's charge window
		// is open, so the job creates them all at its next run.
		sp, err := time.LoadLocation("America/Sao_Paulo")
		require.NoError(t, err)
		const n = 120
		ids := make([]string, n)
		starts := make([]string, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 6 {
					starts[i] = time.Now().In(sp).AddDate(0, 0, 3+i%7).Format("2006-01-02")
					st, out, err := call("POST", "/api/v1/gateway/recurrences", map[string]any{
						"external_id": fmt.Sprintf("kill-%d", i), "payer": map[string]any{"name": "Maria", "document": "52998224725"},
						"contract": "C", "description": "D", "frequency": "MONTHLY", "start_date": starts[i],
						"amount": 10, "retry": "NONE", "postbackUrl": "http://127.0.0.1:9/rec"})
					if err != nil || st != http.StatusCreated {
						errs <- fmt.Errorf("create %d: %d %v: %w", i, st, out, err)
						return
					}
					ids[i] = out["recurrence_id"].(string)
					if st, out, err := call("POST", "/api/v1/sandbox/recurrences/"+ids[i]+"/approve", nil); err != nil || st != http.StatusOK {
						errs <- fmt.Errorf("approve %d: %d %v: %w", i, st, out, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}

		// The job runs every few seconds; kill it at random moments, again
		// and again, restarting each time.
		for round := 0; round < 6; round++ {
			time.Sleep(time.Duration(200+rand.IntN(1800)) * time.Millisecond)
			p.kill()
			p = startProc(t, dbURL, flags...)
		}

		// Then the job finishes on its own.
		deadline := time.Now().Add(60 * time.Second)
		for i, id := range ids {
			for {
				st, out, err := call("GET", "/api/v1/gateway/recurrences/"+id, nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, st)
				data := out["data"].(map[string]any)
				charges := data["charges"].([]any)
				if len(charges) == 0 {
					require.True(t, time.Now().Before(deadline), "recurrence %d never got its first cycle", i)
					time.Sleep(200 * time.Millisecond)
					continue
				}
				require.Len(t, charges, 1, "recurrence %d", i)
				ch := charges[0].(map[string]any)
				require.Equal(t, starts[i], ch["due_date"], "recurrence %d", i)
				require.Equal(t, "PENDING", ch["status"])
				start, err := time.ParseInLocation("2006-01-02", starts[i], sp)
				require.NoError(t, err)
				require.Equal(t, nextMonth(start), data["next_due_date"], "recurrence %d", i)
				break
			}
		}
	})
}

// nextMonth is d's day of the next month, or that month's last day when
// it has fewer days (a monthly recurrence's second due date).
func nextMonth(d time.Time) string {
	first := time.Date(d.Year(), d.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(d.Day(), last), 0, 0, 0, 0, time.UTC).Format("2006-01-02")
}
