package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// orderExec is a site's API that records the jobs it runs: each device's in order,
// whether two of one device ever ran at once, and the most that ran at once.
type orderExec struct {
	mu       sync.Mutex
	running  map[int64]int
	order    map[int64][]int64 // device: the commands, in the order run
	notes    map[int64]string  // command: its job's notes
	now, top int
	overlap  bool
}

func (e *orderExec) RunJob(_ context.Context, cmd, dev int64, _ json.RawMessage, _ int, _, notes string) (int, json.RawMessage, int64) {
	e.mu.Lock()
	e.running[dev]++
	e.overlap = e.overlap || e.running[dev] > 1
	e.now++
	e.top = max(e.top, e.now)
	e.order[dev] = append(e.order[dev], cmd)
	e.notes[cmd] = notes
	e.mu.Unlock()
	time.Sleep(40 * time.Millisecond)
	e.mu.Lock()
	e.running[dev]--
	e.now--
	e.mu.Unlock()
	return http.StatusOK, json.RawMessage(`{"success": true}`), 0
}

// TestRunnerKeepsEachDeviceInOrder: a site takes a hub's jobs for two devices (as a
// bulk execute's elements come); each device's run one after the other in the hub's
// order, the two devices at once, and each job's notes reach the site's API.
func TestRunnerKeepsEachDeviceInOrder(t *testing.T) {
	r := newRig(t)
	rt := &web.Router{Log: slog.New(slog.DiscardHandler)}
	rt.Handle(http.MethodGet, JobsPath, r.in.Jobs)
	srv := httptest.NewServer(rt.Handler())
	t.Cleanup(srv.Close)
	ctx := context.Background()
	// Commands 1-5 on device 7, 6-8 on device 9, interleaved as a request may give them.
	for i, dev := range []int64{7, 9, 7, 7, 9, 7, 9, 7} {
		if _, err := r.db.QueueHubJob(ctx, store.HubJob{Site: r.site.ID, CommandID: 1, DeviceID: 1, EdgeCommandID: int64(i + 1),
			EdgeDeviceID: dev, Timeout: 30, UserID: 1, Username: "noc", Notes: "job " + string(rune('a'+i)),
			Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	edge, err := store.Open(ctx, filepath.Join(t.TempDir(), "edge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { edge.Close() })
	ex := &orderExec{running: map[int64]int{}, order: map[int64][]int64{}, notes: map[int64]string{}}
	run, err := NewRunner(edge, ex, PusherConfig{URL: srv.URL, Token: r.token}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	run.Start(rctx)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ex.mu.Lock()
		n := len(ex.order[7]) + len(ex.order[9])
		ex.mu.Unlock()
		if n == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the site ran %d of 8 jobs", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	srv.CloseClientConnections() // the runner's next poll waits no longer
	run.Wait()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if !slices.Equal(ex.order[7], []int64{1, 3, 4, 6, 8}) || !slices.Equal(ex.order[9], []int64{2, 5, 7}) || ex.overlap {
		t.Fatalf("device 7 ran %v, device 9 %v (two of one device at once: %v)", ex.order[7], ex.order[9], ex.overlap)
	}
	if ex.top < 2 {
		t.Fatalf("at most %d job ran at once: the two devices should run side by side", ex.top)
	}
	if ex.notes[1] != "job a" || ex.notes[8] != "job h" {
		t.Fatalf("the jobs' notes at the site: %v", ex.notes)
	}
}
