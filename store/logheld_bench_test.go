package store

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkHeldPage finds pages in five million held logs of 500 devices, a fifth of
// them failed, ordered by the duration and by the outcome, for a viewer of half the
// devices' failed logs, 100,000 in.
func BenchmarkHeldPage(b *testing.B) {
	const n = 5_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	k := &heldKeys{base: 1, upto: n, maxKey: 500, keys: make([]int32, n)}
	k.heldCols = heldCols{dur: make([]float64, n), durb: make([]uint16, n), cmd: make([]int32, n), cls: make([]uint16, n), classes: newClasses()}
	k.classes.add(userClass{1, "bench"})
	k.classes.seal()
	for i := range k.keys {
		k.keys[i] = int32(rng.IntN(500)) << 1
		if rng.IntN(5) == 0 {
			k.keys[i] |= 1
		}
		k.dur[i] = float64(rng.IntN(5000)) / 1000
		k.durb[i] = durationBucket(k.dur[i])
	}
	pairs := make([]bool, 2*501)
	total := 0
	for d := 0; d < 500; d += 2 {
		pairs[d<<1|1] = true
	}
	for _, key := range k.keys {
		if pairs[key] {
			total++
		}
	}
	f := heldFilter{lo: 1, hi: n, pairs: pairs}
	for _, c := range []struct {
		name string
		col  heldColumn
	}{{"duration", heldByDuration}, {"outcome", heldByOutcome}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := k.page(f, c.col, false, 100_000, 50, total); !ok {
					b.Fatal("no page")
				}
			}
		})
	}
}
