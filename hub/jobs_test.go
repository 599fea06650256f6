package hub

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"fieldkit/web"
)

// TestJobsPollAnsweredWhenTheHubStops: a site's poll waiting for a job is answered (no
// job) as soon as the hub begins to stop, and so is one that comes after, instead of
// each holding the stop up to its wait (30 s: a hub's SIGTERM took that long).
func TestJobsPollAnsweredWhenTheHubStops(t *testing.T) {
	r := newRig(t)
	rt := &web.Router{Log: slog.New(slog.DiscardHandler)}
	rt.Handle(http.MethodGet, JobsPath, r.in.Jobs)
	srv := httptest.NewServer(rt.Handler())
	t.Cleanup(srv.Close)
	poll := func() <-chan Jobs {
		ch := make(chan Jobs, 1)
		go func() {
			req, _ := http.NewRequest("GET", srv.URL+JobsPath+"?wait=30", nil)
			req.Header.Set("Authorization", "Bearer "+r.token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var js Jobs
			if err := json.NewDecoder(res.Body).Decode(&js); err != nil || res.StatusCode != 200 {
				t.Errorf("the poll's answer: %d %v", res.StatusCode, err)
			}
			ch <- js
		}()
		return ch
	}
	answered := poll()
	deadline := time.Now().Add(10 * time.Second)
	for r.count(`SELECT count(*) FROM hub_sites WHERE last_seen IS NOT NULL`) == 0 { // the poll waits
		if time.Now().After(deadline) {
			t.Fatal("the poll never reached the hub")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.in.Stop()
	for i, ch := range []<-chan Jobs{answered, poll()} {
		select {
		case js := <-ch:
			if js.Protocol != Protocol || js.Jobs == nil || len(js.Jobs) != 0 {
				t.Fatalf("poll %d: %+v, want no job", i, js)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("poll %d still waits for a job after the hub began to stop", i)
		}
	}
}
