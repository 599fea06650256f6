package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestHubJobLease: a poll takes a queued job once; a job sent and not answered within
// its lease is taken again; one not taken before it expires is expired; an answer
// finishes it once.
func TestHubJobLease(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	now := time.Now().UTC()
	db.SetClock(func() time.Time { return now })
	site, _, err := db.CreateHubSite(ctx, "Paris", "", "", All)
	if err != nil {
		t.Fatal(err)
	}
	queue := func(expires time.Duration) int64 {
		id, err := db.QueueHubJob(ctx, HubJob{Site: site, CommandID: 1, DeviceID: 2, EdgeCommandID: 3, EdgeDeviceID: 4, Timeout: 30,
			UserID: 1, Username: "noc", Expires: now.Add(expires)})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	claim := func() []int64 {
		jobs, err := db.ClaimHubJobs(ctx, site, 8)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		return ids
	}
	due := func() bool {
		ok, err := db.HubJobsDue(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if due() {
		t.Fatal("a job due with none queued")
	}
	a, b := queue(time.Hour), queue(time.Minute)
	if !due() {
		t.Fatal("no job due with two queued")
	}
	if got := claim(); len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("first poll took %v", got)
	}
	if got := claim(); len(got) != 0 {
		t.Fatalf("a second poll took %v, leased already", got)
	}
	if due() {
		t.Fatal("a job due with both leased")
	}
	if ok, err := db.FinishHubJob(ctx, site, a, 200, json.RawMessage(`{"success": true}`), 0); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, _ := db.FinishHubJob(ctx, site, a, 200, json.RawMessage(`{}`), 0); ok {
		t.Fatal("a job finished twice")
	}
	// Past b's lease (and its expiry): expired, not sent again. A new job past a lease
	// of its own is sent again.
	c := queue(time.Hour)
	if got := claim(); len(got) != 1 || got[0] != c {
		t.Fatalf("took %v, want %d", got, c)
	}
	now = now.Add(JobLease + time.Second)
	if !due() {
		t.Fatal("no job due past a lease")
	}
	if got := claim(); len(got) != 1 || got[0] != c {
		t.Fatalf("after the lease: took %v, want %d again", got, c)
	}
	for id, want := range map[int64]string{a: "done", b: "expired", c: "sent"} {
		if j, err := db.HubJob(ctx, id); err != nil || j.State != want {
			t.Errorf("job %d: %s %v, want %s", id, j.State, err, want)
		}
	}
}

// TestEdgeJobOnce: a job the hub sends again is recognised by its id and not taken
// again; its answer, once recorded, goes to the outbox.
func TestEdgeJobOnce(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	if _, err := db.EnableOutbox(ctx, "https://hub.example"); err != nil {
		t.Fatal(err)
	}
	j, taken, err := db.TakeEdgeJob(ctx, 41)
	if err != nil || !taken {
		t.Fatalf("first: %v %v", taken, err)
	}
	again, taken, err := db.TakeEdgeJob(ctx, 41)
	if err != nil || taken || again.ID != j.ID || again.Status != 0 {
		t.Fatalf("sent again: %+v %v %v", again, taken, err)
	}
	before, _ := db.OutboxState(ctx)
	if err := db.FinishEdgeJob(ctx, j.ID, 200, json.RawMessage(`{"success": true}`), 0); err != nil {
		t.Fatal(err)
	}
	after, _ := db.OutboxState(ctx)
	recs, _ := db.OutboxRecords(ctx, after.Last, 1)
	if after.Last != before.Last+1 || recs[0].Kind != KindJob || recs[0].Ref != j.ID {
		t.Fatalf("the answer's record: %+v", recs)
	}
	got, _ := db.EdgeJobs(ctx, []int64{j.ID})
	if got[j.ID].HubJob != 41 || got[j.ID].Status != 200 {
		t.Fatalf("the answer: %+v", got)
	}
}
