package schedules

import (
	"testing"
	"time"

	"fieldkit/store"
)

func TestNextDue(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, paris)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name  string
		spec  store.ScheduleSpec
		after string
		want  []string
	}{
		{"every minute", store.ScheduleSpec{Cron: "* * * * *"}, "2026-03-02 10:00", []string{"2026-03-02 10:01", "2026-03-02 10:02"}},
		{"nightly, in the server's zone", store.ScheduleSpec{Cron: "0 2 * * *"}, "2026-03-02 10:00",
			[]string{"2026-03-03 02:00", "2026-03-04 02:00"}},
		{"interval", store.ScheduleSpec{Interval: 90 * time.Minute}, "2026-03-02 10:00",
			[]string{"2026-03-02 11:30", "2026-03-02 13:00"}},
		{"hourly cron kept to a night window", store.ScheduleSpec{Cron: "@hourly", WindowStart: "22:00", WindowEnd: "02:00"},
			"2026-03-02 23:10", []string{"2026-03-03 00:00", "2026-03-03 01:00", "2026-03-03 22:00", "2026-03-03 23:00"}},
		{"interval outside its window waits for the opening", store.ScheduleSpec{Interval: 3 * time.Hour, WindowStart: "08:00", WindowEnd: "12:00"},
			"2026-03-02 09:00", []string{"2026-03-03 08:00", "2026-03-03 11:00", "2026-03-04 08:00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm, err := timingOf(tc.spec, paris)
			if err != nil {
				t.Fatal(err)
			}
			got := at(tc.after)
			for _, w := range tc.want {
				got = tm.next(got)
				if !got.Equal(at(w)) {
					t.Fatalf("next: %s, want %s", got.In(paris).Format("2006-01-02 15:04"), w)
				}
			}
		})
	}
}

// A due time at the window's end (12:00 above) is outside it: the run goes to the next
// opening.
func TestWindowEndIsExcluded(t *testing.T) {
	tm, _ := timingOf(store.ScheduleSpec{Interval: time.Hour, WindowStart: "08:00", WindowEnd: "12:00"}, time.UTC)
	noon := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	if tm.inWindow(noon) || !tm.inWindow(noon.Add(-time.Minute)) {
		t.Fatalf("window [08:00, 12:00): 12:00 in=%v, 11:59 in=%v", tm.inWindow(noon), tm.inWindow(noon.Add(-time.Minute)))
	}
}

func TestCheckWhen(t *testing.T) {
	for _, tc := range []struct {
		cron        string
		interval    int64
		hasInterval bool
		start, end  string
		field       string // "" when valid
	}{
		{"*/5 * * * *", 0, false, "", "", ""},
		{"@daily", 0, false, "01:00", "05:00", ""},
		{"", 600, true, "", "", ""},
		{"", 0, false, "", "", "cron"},
		{"* * * * *", 600, true, "", "", "interval"},
		{"61 * * * *", 0, false, "", "", "cron"},
		{"@every 5m", 0, false, "", "", "cron"},
		{"* * * * * *", 0, false, "", "", "cron"},
		{"@hourly", 0, false, "01:00", "", "window_end"},
	} {
		got := CheckWhen(tc.cron, tc.interval, tc.hasInterval, tc.start, tc.end)
		if tc.field == "" && len(got) > 0 || tc.field != "" && got[tc.field] == "" {
			t.Errorf("CheckWhen(%q, %d, %q-%q) = %v, want a problem on %q", tc.cron, tc.interval, tc.start, tc.end, got, tc.field)
		}
	}
}

func TestDueBetweenCountsMissedRuns(t *testing.T) {
	tm, _ := timingOf(store.ScheduleSpec{Cron: "0 * * * *"}, time.UTC)
	from := time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC)
	if n := tm.dueBetween(from, from.Add(5*time.Hour+30*time.Minute), 1000); n != 5 {
		t.Fatalf("hourly from 01:00 to 06:30: %d due, want 5 (02:00 … 06:00)", n)
	}
}
