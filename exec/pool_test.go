package exec

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// poolRig is a simulated device with a pool in front of it.
type poolRig struct {
	*rig
	pool *Pool
}

func newPoolRig(t *testing.T, vendor string, idle time.Duration, mod func(*devsim.Config)) *poolRig {
	t.Helper()
	r := newRig(t, vendor, mod)
	p := NewPool(PoolConfig{Idle: idle, PerDevice: 1, Logger: r.opt.Logger})
	t.Cleanup(p.Close)
	return &poolRig{rig: r, pool: p}
}

// job is one execution of each command with credential set 1 in version 1.
func (r *poolRig) job(cmds ...Command) Job {
	steps := make([]Step, len(cmds))
	for i, c := range cmds {
		steps[i] = Step{Command: c, Timeout: 10 * time.Second}
	}
	return Job{Target: r.tg, Creds: r.cred, SetID: 1, SetVersion: 1, Options: r.opt, Steps: steps}
}

// run runs a job and checks every step succeeded.
func (r *poolRig) run(t *testing.T, j Job) []Result {
	t.Helper()
	res := r.pool.Run(context.Background(), j)
	assertNoSecretResults(t, res)
	for i, x := range res {
		if !x.Success {
			t.Fatalf("step %d: %+v", i, x)
		}
	}
	return res
}

func count(list []string, s string) int {
	n := 0
	for _, l := range list {
		if strings.TrimSpace(l) == s {
			n++
		}
	}
	return n
}

// Five executions on one device with one credential set log in once, on every kind of
// CLI: a shell with enable, one without, a prompt that counts commands, exec channels.
func TestPoolFiveExecutesOneLogin(t *testing.T) {
	for _, vendor := range []string{"cisco_ios", "juniper_junos", "extreme_exos", "huawei_vrp", "linux"} {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			r := newPoolRig(t, vendor, time.Minute, nil)
			cmd := show(showFor(vendor))
			if vendor == "huawei_vrp" {
				cmd = show("display version")
			}
			want := Execute(context.Background(), r.tg, r.cred, r.opt, []Command{cmd})[0]
			before := r.dev.Logins()
			for range 5 {
				got := r.run(t, r.job(cmd))[0]
				if got.Output != want.Output {
					t.Fatalf("output on a kept session differs:\n%q\nwant\n%q", got.Output, want.Output)
				}
			}
			if n := r.dev.Logins() - before; n != 1 {
				t.Errorf("%d logins for 5 executions, want 1", n)
			}
			if st := r.pool.Stats(); st.Logins != 1 || st.Reuses != 4 || st.Open != 1 || st.Idle != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A kept session is never left in configuration mode: a change leaves it with its exit
// line, a show command that entered it is taken out with the driver's abort before the
// session is kept, and a change on a kept session is preceded by an empty line whose
// prompt proves the CLI is there.
func TestPoolNeverKeepsConfigMode(t *testing.T) {
	r := newPoolRig(t, "cisco_ios", time.Minute, nil)
	r.run(t, r.job(show("show version")))
	r.run(t, r.job(show("configure terminal")))
	if cmds := r.dev.Commands(); cmds[len(cmds)-1] != "end" {
		t.Fatalf("config mode not left after a show command entered it: %q", cmds)
	}
	r.run(t, r.job(config("interface GigabitEthernet1/0/1\n description fk-kept")))
	res := r.run(t, r.job(show("show running-config")))
	if !strings.Contains(res[0].Output, "description fk-kept") {
		t.Errorf("running config %q", res[0].Output)
	}
	if !strings.Contains(string(r.dev.Received()), "end\n\nconfigure terminal\n") {
		t.Errorf("no probe before the change on the kept session: %q", r.dev.Received())
	}
	if n := r.dev.Logins(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

// A command that drops the privilege the session had after enable ("disable") does not
// cost the next execution a login: the session is enabled again before it is kept.
func TestPoolRestoresEnable(t *testing.T) {
	r := newPoolRig(t, "cisco_ios", time.Minute, nil)
	r.run(t, r.job(show("show version")))
	r.run(t, r.job(show("disable")))
	res := r.run(t, r.job(show("show running-config")))
	if !strings.Contains(res[0].Output, "hostname") {
		t.Errorf("running config %q", res[0].Output)
	}
	if n := count(r.dev.Commands(), "enable"); n != 2 {
		t.Errorf("enable sent %d times, want 2 (at login, after disable): %q", n, r.dev.Commands())
	}
	if n := r.dev.Logins(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

// A kept session that died is replaced by a fresh login for a show command, whether the
// device hung up while it was kept, its path went silent, or it hung up mid-command.
func TestPoolReplacesDeadSessionForShow(t *testing.T) {
	tests := []struct {
		name   string
		vendor string
		kill   func(d *devsim.Device)
	}{
		{"hung up while kept", "cisco_ios", func(d *devsim.Device) { d.Drop() }},
		{"silent path", "cisco_ios", func(d *devsim.Device) { d.Freeze() }},
		{"hung up during the command", "cisco_ios", func(d *devsim.Device) { d.HangUpAfter("show version") }},
		{"linux hung up while kept", "linux", func(d *devsim.Device) { d.Drop() }},
		{"linux silent path", "linux", func(d *devsim.Device) { d.Freeze() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newPoolRig(t, tt.vendor, time.Minute, nil)
			cmd := show(showFor(tt.vendor))
			first := r.run(t, r.job(cmd))[0]
			tt.kill(r.dev)
			got := r.run(t, r.job(cmd))[0]
			if got.Output != first.Output {
				t.Errorf("output %q, want %q", got.Output, first.Output)
			}
			if n := r.dev.Logins(); n != 2 {
				t.Errorf("%d logins, want 2", n)
			}
			if st := r.pool.Stats(); st.Open != 1 || st.Idle != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A change is never sent twice: when the kept session dies after a line of it reached
// the device, the execution fails and says so; when the session is found dead before
// any line was sent (the probe got no answer, or the channel never opened), the change
// goes to a fresh login, once.
func TestPoolNeverResendsConfig(t *testing.T) {
	t.Run("died after the line", func(t *testing.T) {
		t.Parallel()
		r := newPoolRig(t, "cisco_ios", time.Minute, nil)
		r.run(t, r.job(show("show version")))
		r.dev.HangUpAfter("description fk-once")
		res := r.pool.Run(context.Background(), r.job(config("interface GigabitEthernet1/0/1\n description fk-once")))[0]
		if res.Success || res.ErrorMessage != "Device closed the session" {
			t.Fatalf("%+v", res)
		}
		if n := count(r.dev.Commands(), "description fk-once"); n != 1 {
			t.Errorf("the line reached the device %d times, want 1", n)
		}
		if n := r.dev.Logins(); n != 1 {
			t.Errorf("%d logins, want 1: nothing may log in to send the change again", n)
		}
		r.run(t, r.job(show("show version")))
		if st := r.pool.Stats(); st.Logins != 2 || st.Replaced != 0 {
			t.Errorf("the dead session was kept: %+v", st)
		}
	})
	for _, vendor := range []string{"cisco_ios", "linux"} {
		t.Run("silent before the change "+vendor, func(t *testing.T) {
			t.Parallel()
			r := newPoolRig(t, vendor, time.Minute, nil)
			line := "interface GigabitEthernet1/0/1\n description fk-fresh"
			probe := "description fk-fresh"
			if vendor == "linux" {
				line, probe = "echo fk-fresh", "echo fk-fresh"
			}
			r.run(t, r.job(show(showFor(vendor))))
			r.dev.Freeze()
			r.run(t, r.job(config(line)))
			if n := count(r.dev.Commands(), probe); n != 1 {
				t.Errorf("the line reached the device %d times, want 1", n)
			}
			if st := r.pool.Stats(); st.Logins != 2 || st.Replaced != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A kept session serves only its credential set in its version, with its credentials,
// to its device as addressed: anything else logs in anew, and with one session per
// device the idle one of another key is closed to make room.
func TestPoolKey(t *testing.T) {
	r := newPoolRig(t, "cisco_ios", time.Minute, nil)
	r.run(t, r.job(show("show clock")))
	other := []func(j *Job){
		func(j *Job) { j.SetID = 2 },
		func(j *Job) { j.SetVersion = 2 },
		func(j *Job) { j.Creds.EnableMode = EnableModeSecret },
		func(j *Job) { j.Target.LegacyAlgorithms = true },
	}
	for i, change := range other {
		j := r.job(show("show clock"))
		change(&j)
		r.pool.Run(context.Background(), j)
		if n := r.dev.Logins(); n != i+2 {
			t.Fatalf("change %d: %d logins, want %d", i, n, i+2)
		}
		if st := r.pool.Stats(); st.Open != 1 {
			t.Fatalf("change %d: %d sessions open, want 1", i, st.Open)
		}
	}
	j := r.job(show("show clock"))
	j.Target.ConnectTimeout, j.Target.CommandTimeout = 9*time.Second, 9*time.Second
	j.Target.LegacyAlgorithms = true // the last key used
	r.run(t, j)
	if n := r.dev.Logins(); n != len(other)+1 {
		t.Errorf("a request's own timeouts made another key: %d logins", n)
	}
}

// Closing a set's or a device's sessions closes the idle ones at once and a busy one
// when its job ends; a device that shows a changed host key loses its kept sessions.
func TestPoolCloseFor(t *testing.T) {
	r := newPoolRig(t, "cisco_ios", time.Minute, nil)
	r.pool.Configure(PoolConfig{Idle: time.Minute, PerDevice: 2})
	r.run(t, r.job(show("show clock")))
	r.pool.CloseSet(2)
	if st := r.pool.Stats(); st.Open != 1 {
		t.Fatalf("another set's close closed this one: %+v", st)
	}
	r.pool.CloseSet(1)
	if st := r.pool.Stats(); st.Open != 0 {
		t.Fatalf("after CloseSet: %+v", st)
	}
	j := r.job(show("show clock"), show("show version"))
	j.Done = func(i int, _ Result) {
		if i == 0 {
			r.pool.CloseDevice(r.tg.DeviceID)
		}
	}
	res := r.run(t, j)
	if st := r.pool.Stats(); st.Open != 0 || res[1].Output == "" {
		t.Fatalf("busy session closed under its job, or kept after it: %+v", st)
	}
	r.run(t, r.job(show("show clock")))
	if err := r.dev.RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	j = r.job(show("show clock"))
	j.SetID = 2
	if res := r.pool.Run(context.Background(), j)[0]; !strings.Contains(res.ErrorMessage, "host key") {
		t.Fatalf("%+v", res)
	}
	if st := r.pool.Stats(); st.Open != 0 {
		t.Errorf("kept session to a device whose key changed: %+v", st)
	}
}

// A device never has more sessions than allowed: concurrent jobs wait for the busy one
// and reuse it; a job whose timeout ends while waiting fails saying why.
func TestPoolPerDeviceLimit(t *testing.T) {
	r := newPoolRig(t, "cisco_ios", time.Minute, func(c *devsim.Config) { c.Latency = 50 * time.Millisecond })
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(t, r.job(show("show clock")))
		}()
	}
	wg.Wait()
	if n := r.dev.Logins(); n != 1 {
		t.Errorf("%d logins for 4 concurrent jobs, want 1", n)
	}
	r.dev.SetFault(devsim.FaultSlowOutput)
	busy := make(chan struct{})
	go func() {
		defer close(busy)
		r.pool.Run(context.Background(), r.job(show("show version")))
	}()
	time.Sleep(100 * time.Millisecond)
	j := r.job(show("show clock"))
	j.Steps[0].Timeout = 300 * time.Millisecond
	res := r.pool.Run(context.Background(), j)[0]
	want := "Timed out after 0.3 s waiting for a free session to the device (all 1 allowed in use)"
	if res.Success || res.ErrorMessage != want {
		t.Errorf("got %q, want %q", res.ErrorMessage, want)
	}
	<-busy
	if n := r.dev.Logins(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

// Idle sessions close after the idle time; 0 keeps none; Close and a lower idle time
// close what is kept.
func TestPoolIdle(t *testing.T) {
	r := newPoolRig(t, "cisco_ios", 200*time.Millisecond, nil)
	r.run(t, r.job(show("show clock")))
	deadline := time.Now().Add(5 * time.Second)
	for r.pool.Stats().Open != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := r.pool.Stats(); st.Open != 0 {
		t.Fatalf("idle session not closed: %+v", st)
	}
	r.pool.Configure(PoolConfig{Idle: 0, PerDevice: 1})
	r.run(t, r.job(show("show clock")))
	r.run(t, r.job(show("show clock")))
	if st := r.pool.Stats(); st.Open != 0 || st.Logins != 3 {
		t.Errorf("with idle 0: %+v", st)
	}
	r.pool.Configure(PoolConfig{Idle: time.Minute, PerDevice: 1})
	r.run(t, r.job(show("show clock")))
	r.pool.Configure(PoolConfig{Idle: 0, PerDevice: 1})
	if st := r.pool.Stats(); st.Open != 0 {
		t.Errorf("turning idle off kept %+v", st)
	}
	r.pool.Configure(PoolConfig{Idle: time.Minute, PerDevice: 1})
	r.run(t, r.job(show("show clock")))
	r.pool.Close()
	if st := r.pool.Stats(); st.Open != 0 {
		t.Errorf("after Close: %+v", st)
	}
	r.run(t, r.job(show("show clock")))
	if st := r.pool.Stats(); st.Open != 0 {
		t.Errorf("a closed pool kept a session: %+v", st)
	}
}
