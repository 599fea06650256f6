package textfsm

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// slowMatch is one regexp2 match and what it cost.
type slowMatch struct {
	p    *pyRegex
	line string
	cost time.Duration
}

// regexNames names every regex of lib's templates: "file:line" for a
// rule, "file Value NAME" for a List value's own regex.
func regexNames(lib *Library) map[*pyRegex]string {
	names := map[*pyRegex]string{}
	for _, s := range lib.sets {
		for file, tm := range s.tmpls {
			for _, rules := range tm.prog.states {
				for _, r := range rules {
					names[r.re] = fmt.Sprintf("%s:%d", file, r.line)
				}
			}
			for _, v := range tm.prog.values {
				if v.nested != nil {
					names[v.nested] = file + " Value " + v.name
				}
			}
		}
	}
	return names
}

// BenchmarkBacktrackingWorstMatch measures the worst case of the regexes
// production sends to regexp2 (those RE2 cannot say with Python's
// meaning): each is matched against every distinct line of every ntc
// fixture, not only its own template's, as production matches it (runes,
// captures). A first pass times every match in wall time; the 50
// slowest are measured again in CPU time, best of five, so that another
// process taking the core cannot inflate the figure. Reported:
// worst-cpu-ns, the slowest match, and the regexp2 matches per second of
// the first pass.
func BenchmarkBacktrackingWorstMatch(b *testing.B) {
	needShared(b, ntcDir)
	lib, _ := Load(ntcDir, nil)
	if errs := lib.Check(); len(errs) > 0 {
		b.Fatal(errs)
	}
	names := regexNames(lib)
	var patterns []*pyRegex
	for p := range names {
		if p.re != nil {
			patterns = append(patterns, p)
		}
	}
	lines := corpusLines(b)
	b.Logf("%d regexes on regexp2, %d distinct fixture lines", len(patterns), len(lines))
	for b.Loop() {
		start := time.Now()
		var cands []slowMatch
		for _, p := range patterns {
			for _, line := range lines {
				t0 := time.Now()
				_, err := p.re.FindRunesMatch(line)
				d := time.Since(t0)
				if err != nil {
					b.Errorf("%s on %q: %v", names[p], string(line), err)
				}
				if len(cands) < 50 || d > cands[len(cands)-1].cost {
					cands = insertSlow(cands, slowMatch{p, string(line), d}, 50)
				}
			}
		}
		matches := len(patterns) * len(lines)
		b.ReportMetric(float64(matches)/time.Since(start).Seconds(), "matches/s")
		worst := remeasure(cands)
		b.ReportMetric(float64(worst[0].cost.Nanoseconds()), "worst-cpu-ns")
		for _, m := range worst[:5] {
			b.Logf("%v  %s on %q", m.cost.Round(time.Microsecond), names[m.p], m.line)
		}
	}
}

// corpusLines returns every distinct line of the ntc fixtures, as runes.
func corpusLines(b testing.TB) [][]rune {
	seen := map[string]bool{}
	var out [][]rune
	for _, f := range ntcFixtures(b) {
		raw, err := readRaw(f.raw)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range splitLines(raw) {
			if !seen[line] {
				seen[line] = true
				out = append(out, []rune(line))
			}
		}
	}
	return out
}

// insertSlow keeps cands sorted slowest first and at most n long.
func insertSlow(cands []slowMatch, m slowMatch, n int) []slowMatch {
	i, _ := slices.BinarySearchFunc(cands, m, func(a, b slowMatch) int { return int(b.cost - a.cost) })
	cands = slices.Insert(cands, i, m)
	return cands[:min(n, len(cands))]
}

// remeasure times each candidate five times in CPU time and returns them
// with their best time, slowest first.
func remeasure(cands []slowMatch) []slowMatch {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out := make([]slowMatch, len(cands))
	for i, m := range cands {
		runes := []rune(m.line)
		best := time.Duration(1<<63 - 1)
		for range 5 {
			start := threadCPU()
			m.p.re.FindRunesMatch(runes)
			best = min(best, threadCPU()-start)
		}
		out[i] = slowMatch{m.p, m.line, best}
	}
	slices.SortFunc(out, func(a, b slowMatch) int { return int(b.cost - a.cost) })
	return out
}

// TestEngineChoice checks which patterns go to regexp2: only what RE2
// cannot say with Python's meaning, so that a pattern that backtracks
// exponentially (ntc's cisco_ios show aliases reads "((\w+)(\s)?){1,}")
// runs in linear time wherever it can.
func TestEngineChoice(t *testing.T) {
	tests := []struct {
		pattern   string
		backtrack bool
	}{
		{`((\w+)(\s)?){1,}\saliases:`, false},
		{`\s{2,}x`, false},
		{`a{,4}b{3}c{0,1000}`, false},
		{`^([^\s][\S ]+?)\s{2,16}(\d*)\s{1,12}(\d*)\s*$`, false},
		{`[\W\d]+|[^\S\n]`, false},
		{`x{1001}`, true},
		{`x{2,1001}`, true},
		{`(?<=id )\d+`, true},
		{`\bport`, true},
		{`(?P<a>\w+)=(?P=a)`, true},
	}
	for _, tt := range tests {
		p, err := compilePy(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if got := p.re != nil; got != tt.backtrack {
			t.Errorf("%s: on regexp2 %v, want %v", tt.pattern, got, tt.backtrack)
		}
	}
}
