package store

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestStampsAsPackageTime holds Stamp, AppendStamp and ParseStamp to time.Format and
// time.Parse: random times over ten thousand years and beyond, and texts that are
// nearly stamps (a day past the month's end, 24 o'clock, a 60th second, a sign, a
// space, a letter, another length).
func TestStampsAsPackageTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.FixedZone("x", -9*3600-30*60), time.FixedZone("y", 14*3600)}
	times := []time.Time{{}, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC)}
	for range 20000 {
		sec := rng.Int64N(400_000_000_000) - 70_000_000_000
		times = append(times, time.Unix(sec, rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))]))
	}
	for _, tm := range times {
		want := tm.UTC().Format(TimeFormat)
		if got := Stamp(tm); got != want {
			t.Fatalf("Stamp(%v) = %q, want %q", tm, got, want)
		}
		parsedWant, err := time.Parse(TimeFormat, want)
		if err == nil {
			if got := ParseStamp(want); !got.Equal(parsedWant) || got.Location() != time.UTC {
				t.Fatalf("ParseStamp(%q) = %v, want %v", want, got, parsedWant)
			}
		}
	}
	texts := []string{"2026-02-29T00:00:00.000000Z", "2024-02-29T00:00:00.000000Z", "2026-04-31T12:00:00.000000Z",
		"2026-13-01T00:00:00.000000Z", "2026-00-10T00:00:00.000000Z", "2026-01-00T00:00:00.000000Z",
		"2026-01-01T24:00:00.000000Z", "2026-01-01T23:60:00.000000Z", "2026-01-01T23:59:60.000000Z",
		"+026-01-01T00:00:00.000000Z", "2026-01-01 00:00:00.000000Z", "2026-01-01T00:00:00.00000aZ",
		"2026-01-01T00:00:00.000000+", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.123456789Z", "0000-01-01T00:00:00.000000Z"}
	for range 5000 {
		b := []byte(Stamp(time.Unix(rng.Int64N(4e9), rng.Int64N(1e9))))
		b[rng.IntN(len(b))] = "0123456789-:.TZ +x"[rng.IntN(18)]
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		want, err := time.Parse(TimeFormat, s)
		if err != nil {
			want, _ = time.Parse(time.RFC3339Nano, s)
		}
		if got := ParseStamp(s); !got.Equal(want.UTC()) || got.IsZero() != want.IsZero() {
			t.Fatalf("ParseStamp(%q) = %v, want %v", s, got, want.UTC())
		}
	}
}
