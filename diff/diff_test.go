package diff

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	for _, tt := range []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"equal but the final newline", "a\nb", "a\nb\n", ""},
		{"one line changed", "vlan 10\n name USERS\nvlan 20\n", "vlan 10\n name STAFF\nvlan 20\n",
			"--- before\n+++ after\n@@ -1,3 +1,3 @@\n vlan 10\n- name USERS\n+ name STAFF\n vlan 20\n"},
		{"a line added at the end", "a\n", "a\nb\n", "--- before\n+++ after\n@@ -1 +1,2 @@\n a\n+b\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unified("before", "after", tt.a, tt.b); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestLines(t *testing.T) {
	got := Lines("hostname r1\nntp server 1\nend\n", "hostname r1\nntp server 2\nend\nx\n")
	want := Changes{Removed: []string{"ntp server 1"}, Added: []string{"ntp server 2", "x"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := Lines("a\n", "a\n"); len(got.Added)+len(got.Removed) != 0 || got.Added == nil {
		t.Errorf("equal texts: %+v", got)
	}
}

func TestRecords(t *testing.T) {
	v := func(id, name, ports string) Record {
		return Record{"vlan_id": id, "name": name, "interfaces": []any{ports}}
	}
	before := []Record{v("1", "default", "Gi1"), v("10", "USERS", "Gi2"), v("20", "VOICE", "")}
	after := []Record{v("1", "default", "Gi1"), v("10", "STAFF", "Gi2"), v("30", "CAMERAS", "")}
	t.Run("by key", func(t *testing.T) {
		got := Records(before, after, []string{"vlan_id"})
		want := RecordDiff{Added: []Record{v("30", "CAMERAS", "")}, Removed: []Record{v("20", "VOICE", "")},
			Changed: []Change{{Key: Record{"vlan_id": "10"}, From: v("10", "USERS", "Gi2"), To: v("10", "STAFF", "Gi2")}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("whole records without keys", func(t *testing.T) {
		got := Records(before, after, nil)
		want := RecordDiff{Added: []Record{v("10", "STAFF", "Gi2"), v("30", "CAMERAS", "")},
			Removed: []Record{v("10", "USERS", "Gi2"), v("20", "VOICE", "")}, Changed: []Change{}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("duplicate keys pair in order", func(t *testing.T) {
		got := Records([]Record{v("1", "a", ""), v("1", "b", "")}, []Record{v("1", "a", "")}, []string{"vlan_id"})
		if len(got.Removed) != 1 || len(got.Added) != 0 || len(got.Changed) != 0 {
			t.Errorf("got %+v", got)
		}
	})
}

// BenchmarkUnified10k diffs two 10,000-line configurations that differ in
// 1 % of their lines, spread through the file.
func BenchmarkUnified10k(b *testing.B) {
	a, c := bigConfigs(10000, 100)
	b.SetBytes(int64(len(a) + len(c)))
	for b.Loop() {
		if Unified("a", "b", a, c) == "" {
			b.Fatal("no difference found")
		}
	}
}

// bigConfigs makes two IOS-like configurations of n lines with changed lines changed.
func bigConfigs(n, changed int) (string, string) {
	var a, c strings.Builder
	for i := range n {
		line := fmt.Sprintf("interface GigabitEthernet1/0/%d\n", i)
		if i%3 == 1 {
			line = fmt.Sprintf(" description port %d to access switch\n", i)
		} else if i%3 == 2 {
			line = "!\n"
		}
		a.WriteString(line)
		if changed > 0 && i%(n/changed) == n/changed/2 {
			line = fmt.Sprintf(" description port %d moved\n", i)
		}
		c.WriteString(line)
	}
	return a.String(), c.String()
}

// BenchmarkUnified10kWorst diffs two 10,000-line configurations that share no line
// at all: the most work a diff of that size can be.
func BenchmarkUnified10kWorst(b *testing.B) {
	a, _ := bigConfigs(10000, 0)
	c := strings.ReplaceAll(a, "interface", "vlan")
	c = strings.ReplaceAll(c, "!", "#")
	c = strings.ReplaceAll(c, "description", "name")
	for b.Loop() {
		if Unified("a", "b", a, c) == "" {
			b.Fatal("no difference found")
		}
	}
}

// BenchmarkUnified10kTenth diffs two 10,000-line configurations of which one line in
// ten changed.
func BenchmarkUnified10kTenth(b *testing.B) {
	a, c := bigConfigs(10000, 1000)
	for b.Loop() {
		if Unified("a", "b", a, c) == "" {
			b.Fatal("no difference found")
		}
	}
}
