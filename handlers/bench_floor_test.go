//go:build !windows

package handlers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"fieldkit/store"
)

// The floor of a warm execute: the least that any HTTP service which runs a command on
// a kept session must do, measured beside FieldKit and the bare command in the same run.
//
//	go test ./handlers -run '^$' -bench 'Floor' -benchtime 2000x
//
// "http" is a plain net/http handler that decodes a small JSON body, runs the command in
// an SSH session already logged in and answers the output as JSON, to a keep-alive
// client: no checks, no parsing, no record. "http+log" also inserts one row (device,
// command, output, time) into a one-table SQLite file (WAL, synchronous=NORMAL, one
// writer connection, a prepared statement) and commits it before answering, as an
// audit log must. "http+store" records instead with FieldKit's own store (CreateLog):
// the log with the indexes, counters and word index that keep every log view of five
// million logs fast, and nothing else of FieldKit's request (no token, no permission,
// no parsing). A limit of 1.3× the bare command that even these exceed cannot be met
// by a service that answers over HTTP, let alone one that also records and checks.

// floorServer is that handler, over one kept bare session per device.
type floorServer struct {
	srv      *httptest.Server
	sessions []*devsim.BareSession
	locks    []sync.Mutex
	// record keeps the output before the answer; nil: nothing recorded.
	record func(device int, command, output string) error
}

// What a floor server records.
const (
	recordNothing = iota
	recordRow     // one row in a one-table file
	recordStore   // a log in FieldKit's store
)

// floorRequest is what a client posts to the floor server.
type floorRequest struct {
	Device  int    `json:"device"`
	Command string `json:"command"`
}

func newFloorServer(b *testing.B, sessions []*devsim.BareSession, record int) *floorServer {
	f := &floorServer{sessions: sessions, locks: make([]sync.Mutex, len(sessions))}
	switch record {
	case recordRow:
		f.record = rowRecorder(b)
	case recordStore:
		f.record = storeRecorder(b, len(sessions))
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	b.Cleanup(f.srv.Close)
	return f
}

// rowRecorder inserts one row a command into a one-table SQLite file.
func rowRecorder(b *testing.B) func(int, string, string) error {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "floor.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE log (id INTEGER PRIMARY KEY, device INTEGER NOT NULL,
		command TEXT NOT NULL, output TEXT NOT NULL, created TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	ins, err := db.Prepare(`INSERT INTO log (device, command, output, created) VALUES (?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	return func(device int, command, output string) error {
		_, err := ins.Exec(device, command, output, time.Now().UTC().Format(time.RFC3339Nano))
		return err
	}
}

// storeRecorder records a command log in a FieldKit store of its own, on devices
// floor0 to floor<n-1>, with the columns an execute records that the relay knows.
func storeRecorder(b *testing.B, n int) func(int, string, string) error {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "floor-store.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	site, err := db.Create(ctx, store.Sites, store.Values{"name": "Floor", "slug": "floor"}, store.All)
	if err != nil {
		b.Fatal(err)
	}
	devices, names := make([]int64, n), make([]string, n)
	for i := range devices {
		names[i] = "floor" + strconv.Itoa(i)
		if devices[i], err = db.Create(ctx, store.Devices, store.Values{"name": names[i], "site": site}, store.All); err != nil {
			b.Fatal(err)
		}
	}
	return func(device int, command, output string) error {
		_, err := db.CreateLog(ctx, store.Values{
			"command_name": "Version", "command_type": "show", "device": devices[device],
			"device_name": names[device], "username": "floor", "output": output,
			"success": true, "execution_time": time.Now(), "sent_command": command, "source": "api",
			"client_address": "127.0.0.1"})
		return err
	}
}

func (f *floorServer) serve(w http.ResponseWriter, r *http.Request) {
	var req floorRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Device < 0 || req.Device >= len(f.sessions) {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.locks[req.Device].Lock()
	err := f.sessions[req.Device].Run(req.Command)
	output := string(f.sessions[req.Device].Output())
	f.locks[req.Device].Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if f.record != nil {
		if err := f.record(req.Device, req.Command, output); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"success": true, "output": output})
}

// floorClient posts to a floor server over keep-alive connections.
type floorClient struct {
	b      *testing.B
	client *http.Client
	url    string
}

func newFloorClient(b *testing.B, f *floorServer) *floorClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return &floorClient{b: b, client: &http.Client{Transport: tr}, url: f.srv.URL}
}

func (c *floorClient) run(device int, command string) {
	body, _ := json.Marshal(floorRequest{Device: device, Command: command})
	res, err := c.client.Post(c.url, "application/json", bytes.NewReader(body))
	if err != nil {
		c.b.Error(err)
		return
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(raw, []byte(`"success":true`)) {
		c.b.Errorf("%d %s", res.StatusCode, raw)
	}
}

// floorTimes adds up the wall and CPU time of each way of running the command.
type floorTimes struct {
	names     []string
	wall, cpu []time.Duration
}

func newFloorTimes(names ...string) *floorTimes {
	return &floorTimes{names: names, wall: make([]time.Duration, len(names)), cpu: make([]time.Duration, len(names))}
}

// time runs f as way i and adds its times.
func (t *floorTimes) time(i int, f func()) {
	c0, t0 := cpuTime(), time.Now()
	f()
	t.wall[i] += time.Since(t0)
	t.cpu[i] += cpuTime() - c0
}

// report gives each way's wall and CPU per operation (n operations, each of per
// executions), and its wall as a ratio to the last way's (the bare command).
func (t *floorTimes) report(b *testing.B, n, per int) {
	base := t.wall[len(t.wall)-1]
	for i, name := range t.names {
		b.ReportMetric(float64(t.wall[i].Microseconds())/float64(n)/1000, name+"-ms/op")
		b.ReportMetric(float64(t.cpu[i].Microseconds())/float64(n*per)/1000, name+"-cpu-ms/exec")
		if i < len(t.names)-1 {
			b.ReportMetric(float64(t.wall[i])/float64(base), name+"/bare")
		}
	}
}

// BenchmarkFloorWarm: one command at a time on the real FRR peer (or the simulator at
// 10 ms), by FieldKit's API on a kept session, by the two floor servers and in a bare
// session, alternating.
func BenchmarkFloorWarm(b *testing.B) {
	for _, name := range []string{"sim-10ms", "frr"} {
		b.Run(name, func(b *testing.B) {
			_, tg, ex := onOneDevice(b, name)
			bare := tg.openBare(b)
			plain := newFloorClient(b, newFloorServer(b, []*devsim.BareSession{tg.openBare(b)}, recordNothing))
			logged := newFloorClient(b, newFloorServer(b, []*devsim.BareSession{tg.openBare(b)}, recordRow))
			stored := newFloorClient(b, newFloorServer(b, []*devsim.BareSession{tg.openBare(b)}, recordStore))
			t := newFloorTimes("fieldkit", "http", "http+log", "http+store", "bare")
			b.ResetTimer()
			for range b.N {
				t.time(0, func() { ex.run(tg.id, tg.token) })
				t.time(1, func() { plain.run(0, "show version") })
				t.time(2, func() { logged.run(0, "show version") })
				t.time(3, func() { stored.run(0, "show version") })
				t.time(4, func() {
					if err := bare.Run("show version"); err != nil {
						b.Fatal(err)
					}
				})
			}
			t.report(b, b.N, 1)
		})
	}
}

// BenchmarkFloorFifty: 50 commands at once on 50 simulated devices (in a child process,
// 10 ms latency), each on a kept session: by FieldKit's API, by the two floor servers,
// and in 50 bare sessions, alternating.
func BenchmarkFloorFifty(b *testing.B) {
	const n = 50
	x, ports, ids, ex := fiftyDevices(b)
	each := func(f func(i int)) { eachAtOnce(n, f) }
	bares := openBares(b, ports)
	plain := newFloorClient(b, newFloorServer(b, openBares(b, ports), recordNothing))
	logged := newFloorClient(b, newFloorServer(b, openBares(b, ports), recordRow))
	stored := newFloorClient(b, newFloorServer(b, openBares(b, ports), recordStore))
	t := newFloorTimes("fieldkit", "http", "http+log", "http+store", "bare")
	b.ResetTimer()
	for range b.N {
		t.time(0, func() { each(func(i int) { ex.run(ids[i], x.token) }) })
		t.time(1, func() { each(func(i int) { plain.run(i, "show version") }) })
		t.time(2, func() { each(func(i int) { logged.run(i, "show version") }) })
		t.time(3, func() { each(func(i int) { stored.run(i, "show version") }) })
		t.time(4, func() {
			each(func(i int) {
				if err := bares[i].Run("show version"); err != nil {
					b.Error(err)
				}
			})
		})
	}
	t.report(b, b.N, n)
}
