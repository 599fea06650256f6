package hub

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
)

// fakeRender renders a log as its id and output, from the edge's store.
type fakeRender struct{ db *store.DB }

func (f fakeRender) Render(ctx context.Context, kind string, ids []int64) (map[int64]json.RawMessage, error) {
	rows, err := f.db.Rows(ctx, store.CommandLogs, ids)
	out := map[int64]json.RawMessage{}
	for _, r := range rows {
		out[r.ID()], _ = json.Marshal(map[string]any{"id": r.ID(), "output": r["output"], "parsed_output": []any{}})
	}
	return out, err
}

// tightHub is a hub that takes at most two records a batch and 50 KB of body: it
// answers 413 beyond, else stores and acknowledges.
type tightHub struct {
	mu      sync.Mutex
	next    int64
	got     []Record
	refused int
}

func (h *tightHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	zr, _ := gzip.NewReader(r.Body)
	var b Batch
	json.NewDecoder(zr).Decode(&b)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next == 0 {
		h.next = b.EpochStart
	}
	size := 0
	for _, rec := range b.Records {
		size += len(rec.Body)
	}
	w.Header().Set("Content-Type", "application/json")
	if len(b.Records) > 2 || size > 50<<10 {
		h.refused++
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		json.NewEncoder(w).Encode(Answer{Protocol: Protocol, MaxBytes: 50 << 10})
		return
	}
	for _, rec := range b.Records {
		if rec.Seq == h.next {
			h.got = append(h.got, rec)
			h.next++
		}
	}
	json.NewEncoder(w).Encode(Answer{Protocol: Protocol, Acknowledged: h.next - 1, Expected: h.next})
}

// TestPusherSplitsAndCuts: a hub that refuses a batch as too large (413) gets it in
// halves, and a log too large alone gets its output cut and marked; every record
// arrives, in order, and the outbox is acknowledged to its end.
func TestPusherSplitsAndCuts(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "edge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := &tightHub{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if _, err := db.EnableOutbox(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		out := fmt.Sprint("output ", i)
		if i == 3 {
			out = strings.Repeat("x", 200<<10) // alone over the hub's limit
		}
		if _, err := db.CreateLog(ctx, store.Values{"command_name": "c", "device_name": "d", "username": "u", "success": true, "output": out}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPusher(db, fakeRender{db}, PusherConfig{URL: srv.URL, Token: "t", Version: "test"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(ctx)
	p.Start(pctx)
	defer func() { stop(); p.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := db.OutboxState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %+v, pusher %+v", st, p.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var logs []Record
	for _, rec := range h.got {
		if rec.Kind == store.KindLog {
			logs = append(logs, rec)
		}
	}
	if len(logs) != 7 || h.refused == 0 {
		t.Fatalf("the hub got %d logs after %d refusals", len(logs), h.refused)
	}
	for i, rec := range logs {
		var b struct{ Output string }
		json.Unmarshal(rec.Body, &b)
		switch {
		case i == 3 && (!rec.Cut || len(b.Output) > 50<<10 || !strings.HasPrefix(b.Output, "xxx")):
			t.Errorf("the large log: cut %v, %d bytes", rec.Cut, len(b.Output))
		case i != 3 && (rec.Cut || b.Output != fmt.Sprint("output ", i)):
			t.Errorf("log %d: cut %v, %q", i, rec.Cut, b.Output)
		case i > 0 && rec.Seq <= logs[i-1].Seq:
			t.Errorf("log %d out of order", i)
		case rec.UID == "" || rec.UID != LogUID(mustState(t, db).Instance, rec.ID, mustStamp(t, db, rec.ID)):
			t.Errorf("log %d: uid %q", i, rec.UID)
		}
	}
}

func mustState(t *testing.T, db *store.DB) store.OutboxState {
	st, err := db.OutboxState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustStamp(t *testing.T, db *store.DB, id int64) string {
	s, err := db.LogStamps(context.Background(), []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	return s[id]
}
