//go:build !windows

package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/devsim"
	"fieldkit/store"
)

// Benchmarks of kept sessions and of concurrency. Each compares FieldKit with the limit
// measured in the same run, alternating the two, and reports the ratio:
//
//	go test ./handlers -run '^$' -bench WarmExecute -benchtime 300x
//	go test ./handlers -run '^$' -bench TwentyOnOneDevice -benchtime 20x
//	go test ./handlers -run '^$' -bench FiftyConcurrent -benchtime 10x
//
// The FRR cases need the real peer (source /work/peers.env); without it they skip.

// TestMain serves simulated devices when the benchmark starts this binary for them (see
// remoteDevices); otherwise it runs the tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv("FIELDKIT_BENCH_DEVSIM"); spec != "" {
		os.Exit(serveDevices(spec))
	}
	code := m.Run()
	if code == 0 && coverageWanted() {
		if missing := checkCoverage(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: operations of /api/schema/ not validated both ways (conformance_test.go):\n  %s\n",
				strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// serveDevices starts "n,latency_ms" IOS devices, prints their ports as one JSON line and
// runs them until standard input closes.
func serveDevices(spec string) int {
	n, lat, _ := strings.Cut(spec, ",")
	count, _ := strconv.Atoi(n)
	ms, _ := strconv.Atoi(lat)
	ports := make([]int, count)
	for i := range ports {
		d, err := devsim.Start(devsim.Config{Vendor: "cisco_ios", Hostname: "dev" + strconv.Itoa(i), Username: simUser,
			Password: simPass, Latency: time.Duration(ms) * time.Millisecond})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer d.Close()
		ports[i] = d.Port()
	}
	json.NewEncoder(os.Stdout).Encode(ports)
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// remoteDevices runs n simulated devices in a child process, so that the CPU this
// process spends is FieldKit's (or the bare clients') alone.
func remoteDevices(b *testing.B, n int, latency time.Duration) []int {
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("FIELDKIT_BENCH_DEVSIM=%d,%d", n, latency.Milliseconds()))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	var ports []int
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &ports) != nil || len(ports) != n {
		b.Fatalf("device process: %v %q", err, line)
	}
	return ports
}

// benchTarget is a device to execute on and the bare baseline against it.
type benchTarget struct {
	id                     int64
	addr, user, pw, prompt string
	token                  string
}

// simTarget is a simulated IOS device answering after latency, in this process.
func simTarget(x *xenv, latency time.Duration) benchTarget {
	dev, id := x.deviceWith("bench1", "cisco_ios", x.iosPlat, func(c *devsim.Config) {
		c.EnableSecret = ""
		c.Latency = latency
	})
	return benchTarget{id: id, addr: dev.Addr(), user: simUser, pw: simPass, prompt: "bench1#", token: x.token}
}

// frrTarget is the real FRR peer, or a skip when it is not running.
func frrTarget(b *testing.B, x *xenv) benchTarget {
	addr, user, pw := os.Getenv("FIELDKIT_TEST_FRR_ADDR"), os.Getenv("FIELDKIT_TEST_FRR_USER"), os.Getenv("FIELDKIT_TEST_FRR_PASSWORD")
	if addr == "" {
		b.Skip("FIELDKIT_TEST_FRR_ADDR is not set: source /work/peers.env")
	}
	_, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	uid, _ := x.db.UserIDByName(context.Background(), "admin")
	_, tok, err := x.db.CreateCredentialSet(context.Background(), x.kr, uid, store.CredentialInput{Name: ptrTo("frr"),
		Username: &user, Password: &pw})
	if err != nil {
		b.Fatal(err)
	}
	host := os.Getenv("FIELDKIT_TEST_FRR_HOSTNAME")
	if host == "" {
		host = "fk-frr"
	}
	return benchTarget{id: x.register("frr", x.iosPlat, p), addr: addr, user: user, pw: pw, prompt: host + "#", token: tok}
}

// benchEnv is an execution server with a session pool, logging at info as a server does.
func benchEnv(b *testing.B) *xenv {
	x := newXEnv(b, 1<<30, func(o *ExecOptions) {
		o.Pool = exec.NewPool(exec.PoolConfig{Idle: time.Minute, PerDevice: 1})
		b.Cleanup(o.Pool.Close)
	})
	x.api.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return x
}

// executor posts execute requests over keep-alive connections, as a client would.
type executor struct {
	b      *testing.B
	client *http.Client
	url    string
	admin  string
}

func newExecutor(b *testing.B, x *xenv, cmd int64) *executor {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return &executor{b: b, client: &http.Client{Transport: tr}, url: x.srv.URL + execPath(cmd), admin: x.admin}
}

func (e *executor) run(device int64, token string) {
	body, _ := json.Marshal(map[string]any{"device_id": device, "credential_token": token})
	req, _ := http.NewRequest("POST", e.url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Token "+e.admin)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.client.Do(req)
	if err != nil {
		e.b.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(raw, []byte(`"success":true`)) {
		e.b.Fatalf("%d %s", res.StatusCode, raw)
	}
}

// BenchmarkWarmExecute: "show version" through the API on a kept session, against the
// same command in a bare SSH session that is already logged in.
func BenchmarkWarmExecute(b *testing.B) {
	for _, name := range []string{"sim-10ms", "frr"} {
		b.Run(name, func(b *testing.B) {
			x, tg, ex := onOneDevice(b, name)
			bare := tg.openBare(b)
			var api, base, apiCPU time.Duration
			b.ResetTimer()
			for range b.N {
				c0, t0 := cpuTime(), time.Now()
				ex.run(tg.id, tg.token)
				c1, t1 := cpuTime(), time.Now()
				if err := bare.Run("show version"); err != nil {
					b.Fatal(err)
				}
				api, base, apiCPU = api+t1.Sub(t0), base+time.Since(t1), apiCPU+c1-c0
			}
			report(b, api, base, b.N)
			// The CPU of the API side (server and its client) says what a request costs
			// when the wall times are those of a machine busy with other work.
			b.ReportMetric(float64(apiCPU.Microseconds())/float64(b.N)/1000, "api-cpu-ms/op")
			if st := x.api.Exec.Pool.Stats(); st.Logins != 1 {
				b.Errorf("%d logins, want 1", st.Logins)
			}
		})
	}
}

// onOneDevice is an execution server, the target named ("frr" or "sim-10ms") and a
// client that has executed on it once: logged in, host key stored, session kept.
func onOneDevice(b *testing.B, name string) (*xenv, benchTarget, *executor) {
	x := benchEnv(b)
	tg := frrOrSim(b, x, name)
	ex := newExecutor(b, x, x.command("Version", "show version", "show"))
	ex.run(tg.id, tg.token)
	return x, tg, ex
}

// openBare opens a bare session on the target, logged in and with paging off, closed
// when the benchmark ends.
func (tg benchTarget) openBare(b *testing.B) *devsim.BareSession {
	s, err := devsim.OpenBare(tg.addr, tg.user, tg.pw, tg.prompt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Run("terminal length 0"); err != nil {
		b.Fatal(err)
	}
	return s
}

func frrOrSim(b *testing.B, x *xenv, name string) benchTarget {
	if name == "frr" {
		return frrTarget(b, x)
	}
	return simTarget(x, 10*time.Millisecond)
}

// report gives the per-operation times of both sides and their ratio.
func report(b *testing.B, api, base time.Duration, n int) {
	b.ReportMetric(float64(api.Microseconds())/float64(n)/1000, "api-ms/op")
	b.ReportMetric(float64(base.Microseconds())/float64(n)/1000, "bare-ms/op")
	b.ReportMetric(float64(api)/float64(base), "ratio")
}

// BenchmarkTwentyOnOneDevice: 20 executions in a row on one device, starting without a
// kept session, against one bare session logging in and running the 20 commands.
func BenchmarkTwentyOnOneDevice(b *testing.B) {
	for _, name := range []string{"sim-10ms", "frr"} {
		b.Run(name, func(b *testing.B) {
			x, tg, ex := onOneDevice(b, name)
			var api, base time.Duration
			b.ResetTimer()
			for range b.N {
				x.api.Exec.Pool.CloseDevice(tg.id)
				t0 := time.Now()
				for range 20 {
					ex.run(tg.id, tg.token)
				}
				t1 := time.Now()
				cmds := append([]string{"terminal length 0"}, slicesRepeat("show version", 20)...)
				if err := devsim.BareRun(tg.addr, tg.user, tg.pw, tg.prompt, cmds...); err != nil {
					b.Fatal(err)
				}
				api, base = api+t1.Sub(t0), base+time.Since(t1)
			}
			report(b, api, base, b.N)
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// BenchmarkFiftyConcurrent: 50 executions at once on 50 simulated devices (in a child
// process, 10 ms latency) against 50 bare sessions at once. "cold" logs in for each
// (sessions are not kept) against bare sessions that log in; "warm" runs on kept
// sessions against bare sessions already logged in. cpu-ms/exec is this process's CPU
// (getrusage) per execution: the server, plus the HTTP client's share.
func BenchmarkFiftyConcurrent(b *testing.B) {
	const n = 50
	for _, mode := range []string{"cold", "warm"} {
		b.Run(mode, func(b *testing.B) {
			x, ports, ids, ex := fiftyDevices(b)
			each := func(f func(i int)) { eachAtOnce(n, f) }
			var bares []*devsim.BareSession
			if mode == "cold" {
				x.api.Exec.Pool.Configure(exec.PoolConfig{Idle: 0, PerDevice: 1})
			} else {
				bares = openBares(b, ports)
			}
			var api, base, apiCPU, baseCPU time.Duration
			b.ResetTimer()
			for range b.N {
				c0, t0 := cpuTime(), time.Now()
				each(func(i int) { ex.run(ids[i], x.token) })
				c1, t1 := cpuTime(), time.Now()
				each(func(i int) {
					var err error
					if mode == "cold" {
						err = devsim.BareRun("127.0.0.1:"+strconv.Itoa(ports[i]), simUser, simPass, "dev"+strconv.Itoa(i)+"#",
							"terminal length 0", "show version")
					} else {
						err = bares[i].Run("show version")
					}
					if err != nil {
						b.Error(err)
					}
				})
				c2, t2 := cpuTime(), time.Now()
				api, base = api+t1.Sub(t0), base+t2.Sub(t1)
				apiCPU, baseCPU = apiCPU+c1-c0, baseCPU+c2-c1
			}
			b.ReportMetric(float64(api.Microseconds())/float64(b.N)/1000, "api-wall-ms")
			b.ReportMetric(float64(base.Microseconds())/float64(b.N)/1000, "bare-wall-ms")
			b.ReportMetric(float64(api)/float64(base), "ratio")
			b.ReportMetric(float64(apiCPU.Microseconds())/float64(b.N*n)/1000, "api-cpu-ms/exec")
			b.ReportMetric(float64(baseCPU.Microseconds())/float64(b.N*n)/1000, "bare-cpu-ms/exec")
		})
	}
}

// fiftyDevices is an execution server with 50 simulated devices (in a child process,
// 10 ms latency), their ids and ports, and a client that has executed once on each:
// host keys stored, sessions kept.
func fiftyDevices(b *testing.B) (*xenv, []int, []int64, *executor) {
	const n = 50
	x := benchEnv(b)
	ports := remoteDevices(b, n, 10*time.Millisecond)
	cmd := x.command("Version", "show version", "show")
	ids := make([]int64, n)
	for i, p := range ports {
		ids[i] = x.register("dev"+strconv.Itoa(i), x.iosPlat, p)
	}
	ex := newExecutor(b, x, cmd)
	eachAtOnce(n, func(i int) { ex.run(ids[i], x.token) })
	return x, ports, ids, ex
}

// eachAtOnce runs f for 0 to n-1, each in its own goroutine, and waits for them all.
func eachAtOnce(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// openBares opens a bare session, logged in and with paging off, on each of the
// simulated devices at ports (named dev0, dev1, …), closed when the benchmark ends.
func openBares(b *testing.B, ports []int) []*devsim.BareSession {
	out := make([]*devsim.BareSession, len(ports))
	eachAtOnce(len(ports), func(i int) {
		s, err := devsim.OpenBare("127.0.0.1:"+strconv.Itoa(ports[i]), simUser, simPass, "dev"+strconv.Itoa(i)+"#")
		if err != nil {
			b.Error(err)
			return
		}
		out[i] = s
		if err := s.Run("terminal length 0"); err != nil {
			b.Error(err)
		}
	})
	b.Cleanup(func() {
		for _, s := range out {
			if s != nil {
				s.Close()
			}
		}
	})
	if b.Failed() {
		b.FailNow()
	}
	return out
}

// cpuTime is the user and system CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExecuteOutbox: a warm execute on a simulated device that answers at once,
// on a site that pushes to a hub (its outbox notes each log's record in the log's
// transaction; the hub is down, so the records stay) and on one that does not,
// alternating between the two servers.
func BenchmarkExecuteOutbox(b *testing.B) {
	off, on := benchEnv(b), benchEnv(b)
	if _, err := on.db.EnableOutbox(b.Context(), "https://hub.invalid"); err != nil {
		b.Fatal(err)
	}
	type side struct {
		tg        benchTarget
		ex        *executor
		wall, cpu time.Duration
	}
	sides := []*side{}
	for _, x := range []*xenv{off, on} {
		s := &side{tg: simTarget(x, 0)}
		s.ex = newExecutor(b, x, x.command("Version", "show version", "show"))
		s.ex.run(s.tg.id, s.tg.token)
		sides = append(sides, s)
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range sides {
			s := sides[(i+j)%2] // each goes first half the time
			c0, t0 := cpuTime(), time.Now()
			s.ex.run(s.tg.id, s.tg.token)
			s.cpu, s.wall = s.cpu+cpuTime()-c0, s.wall+time.Since(t0)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(per(sides[0].wall), "off-ms/op")
	b.ReportMetric(per(sides[1].wall), "on-ms/op")
	b.ReportMetric(per(sides[0].cpu), "off-cpu-ms/op")
	b.ReportMetric(per(sides[1].cpu), "on-cpu-ms/op")
	b.ReportMetric(float64(sides[1].cpu)/float64(sides[0].cpu), "cpu-ratio")
	if st, err := on.db.OutboxState(b.Context()); err != nil || st.Pending < int64(b.N) {
		b.Fatalf("the outbox holds %d records for %d executions: %v", st.Pending, b.N, err)
	}
}
