package textfsm

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// macTable builds an IOS "show mac address-table" of n entries.
func macTable(n int) string {
	var b strings.Builder
	b.WriteString("          Mac Address Table\n-------------------------------------------\n\n")
	b.WriteString("Vlan    Mac Address       Type        Ports\n----    -----------       --------    -----\n")
	for i := range n {
		fmt.Fprintf(&b, "%4d    0000.5e%02x.%04x    DYNAMIC     Gi1/0/%d\n", 1+i%40, i>>16, i&0xffff, 1+i%48)
	}
	fmt.Fprintf(&b, "Total Mac Addresses for this criterion: %d\n", n)
	return b.String()
}

var iosPlatforms = []string{"cisco_ios"}

func BenchmarkParse1000Lines(b *testing.B) {
	lib := loadBuiltinOnly(b)
	out := macTable(1000)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if p := lib.Parse(iosPlatforms, "show mac address-table", out); len(p.Data) != 1000 {
			b.Fatalf("got %d records: %s", len(p.Data), p.Error)
		}
	}
}

// BenchmarkParse1000LinesParallel shows parses of one shared template
// scaling across goroutines.
func BenchmarkParse1000LinesParallel(b *testing.B) {
	lib := loadBuiltinOnly(b)
	out := macTable(1000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if p := lib.Parse(iosPlatforms, "show mac address-table", out); len(p.Data) != 1000 {
				b.Errorf("got %d records", len(p.Data))
			}
		}
	})
}

// TestParseConcurrent runs different outputs through the same templates
// from many goroutines and checks each result equals the sequential one.
// Run it with -race: a state machine shared between two parses would
// show up both as a race and as records leaking between outputs.
func TestParseConcurrent(t *testing.T) {
	lib := loadBuiltinOnly(t)
	type job struct {
		driver, command, output string
		want                    Parsed
	}
	var jobs []job
	for _, n := range []int{0, 1, 7, 50} {
		out := macTable(n)
		jobs = append(jobs, job{"cisco_ios", "show mac address-table", out, lib.Parse(iosPlatforms, "show mac address-table", out)})
	}
	for _, s := range []struct{ driver, cmd, file string }{
		{"cisco_ios", "show vlan brief", "show_vlan_brief"},
		{"juniper_junos", "show ethernet-switching table", "show_ethernet-switching_table"},
		{"cisco_nxos", "show ip arp", "show_ip_arp"},
	} {
		out := readSample(t, s.driver, s.file)
		jobs = append(jobs, job{s.driver, s.cmd, out, lib.Parse(driverPlatforms(s.driver), s.cmd, out)})
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				j := jobs[(g+i)%len(jobs)]
				if got := lib.Parse(driverPlatforms(j.driver), j.command, j.output); !reflect.DeepEqual(got, j.want) {
					t.Errorf("%s %q: concurrent result differs: %d records, want %d", j.driver, j.command, len(got.Data), len(j.want.Data))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkLoadNTC measures what start-up pays for a full ntc-templates
// directory: reading the index and every template and checking all their
// regexes (each template is compiled for the engine at its first use).
func BenchmarkLoadNTC(b *testing.B) {
	needShared(b, ntcDir)
	for b.Loop() {
		if _, errs := Load(ntcDir, nil); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkCompileNTC measures compiling every ntc template for the
// engine, the work Load leaves to each template's first use.
func BenchmarkCompileNTC(b *testing.B) {
	needShared(b, ntcDir)
	for b.Loop() {
		b.StopTimer()
		lib, _ := Load(ntcDir, nil)
		b.StartTimer()
		if errs := lib.Check(); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkNTCFixtures parses the whole ntc fixture corpus once per
// iteration, templates compiled beforehand.
func BenchmarkNTCFixtures(b *testing.B) {
	needShared(b, ntcDir)
	fixtures := ntcFixtures(b)
	lib, _ := Load(ntcDir, nil)
	lib.Check()
	outputs := make([]string, len(fixtures))
	for i, f := range fixtures {
		var err error
		if outputs[i], err = readRaw(f.raw); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for i, f := range fixtures {
			if p := lib.Parse([]string{f.platform}, f.command, outputs[i]); !p.Success {
				b.Fatalf("%s: %s", f.raw, p.Error)
			}
		}
	}
}
