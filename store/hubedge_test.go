package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// outboxRows is every record of the outbox from seq from on, as "kind op ref".
func outboxRows(t *testing.T, db *DB, from int64) []string {
	t.Helper()
	recs, err := db.OutboxRecords(context.Background(), from, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s %s %d", r.Kind, r.Op, r.Ref))
	}
	return out
}

// TestOutboxNotesEveryChange: once enabled, every change the hub shows is noted in its
// own transaction, by whatever writes it; before, nothing is.
func TestOutboxNotesEveryChange(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	id := mustID[int64](t)
	site := id(db.Create(ctx, Sites, Values{"name": "North", "slug": "north"}, All))
	before := id(db.Create(ctx, Platforms, Values{"name": "EOS", "slug": "eos"}, All))
	if rows := outboxRows(t, db, 0); len(rows) != 0 {
		t.Fatalf("noted while off: %v", rows)
	}
	st, err := db.EnableOutbox(ctx, "https://hub.example")
	if err != nil {
		t.Fatal(err)
	}
	if st.Instance == "" || st.Epoch == "" || st.EpochStart != 1 || st.Acked != 0 {
		t.Fatalf("state after the first enable: %+v", st)
	}
	// The enable copies what exists: the platform, then the snapshot.
	if got, want := outboxRows(t, db, 0), []string{fmt.Sprintf("platform upsert %d", before), "snapshot upsert 0"}; !slices.Equal(got, want) {
		t.Fatalf("enable noted %v, want %v", got, want)
	}
	mark := st.Last + 1

	tag := id(db.Create(ctx, Tags, Values{"name": "core", "slug": "core"}, All))
	dev := id(db.Create(ctx, Devices, Values{"name": "sw1", "site": site, "platform": before, "tags": []int64{tag}}, All))
	iface := id(db.Create(ctx, Interfaces, Values{"device": dev, "name": "Gi0/1"}, All))
	ip := id(db.Create(ctx, IPAddresses, Values{"address": "192.0.2.10/24", "assigned_object_id": iface}, All))
	if err := db.Update(ctx, Devices, dev, Values{"primary_ip4": ip}, All); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, IPAddresses, ip, Values{"address": "192.0.2.11/24"}, All); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, Tags, tag, Values{"slug": "backbone"}, All); err != nil {
		t.Fatal(err)
	}
	cmd := id(db.Create(ctx, Commands, Values{"name": "ver", "command": "show version", "platforms": []int64{before},
		"variables": []Values{{"name": "x"}}}, All))
	logID, err := db.CreateLog(ctx, Values{"command": cmd, "command_name": "ver", "device": dev, "device_name": "sw1",
		"username": "alice", "success": true, "output": "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Commands, cmd); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Tags, tag); err != nil {
		t.Fatal(err)
	}
	got := outboxRows(t, db, mark)
	// Each write's own records, in commit order; the command's platforms and variables
	// each note the command again, and a delete's cascades note nothing of the gone.
	d, c := fmt.Sprintf(" %d", dev), fmt.Sprintf(" %d", cmd)
	want := []string{
		"device upsert" + d, "device upsert" + d, // the device, its tag
		"device upsert" + d,                                              // its primary IP
		"device upsert" + d,                                              // the primary IP's new address
		"device upsert" + d,                                              // the tag's new slug
		"command upsert" + c, "command upsert" + c, "command upsert" + c, // the command, its platform, its variable
		fmt.Sprintf("log upsert %d", logID),
		"command delete" + c,
		"device upsert" + d, // the tag's delete takes it off the device
	}
	if !slices.Equal(got, want) {
		t.Fatalf("noted:\n%v\nwant:\n%v", got, want)
	}
	st, err = db.OutboxState(ctx)
	if err != nil || st.Pending != st.Last || st.Oldest.IsZero() {
		t.Fatalf("state: %+v %v", st, err)
	}

	// Off again: nothing is noted, and the records stay.
	pending, err := db.DisableOutbox(ctx)
	if err != nil || pending != st.Pending {
		t.Fatalf("disable: %d %v", pending, err)
	}
	id(db.Create(ctx, Platforms, Values{"name": "IOS", "slug": "ios"}, All))
	if after, err := db.OutboxState(ctx); err != nil || after.Last != st.Last {
		t.Fatalf("noted while off: %+v %v", after, err)
	}
}

// TestOutboxAcksAndResends: acknowledged records are kept for a while, a hub that
// lost some gets them again, and a prune never leaves a hole.
func TestOutboxAcksAndResends(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	st, err := db.EnableOutbox(ctx, "https://hub.example")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustID[int64](t)(db.Create(ctx, Platforms, Values{"name": fmt.Sprint("P", i), "slug": fmt.Sprint("p", i)}, All))
	}
	if err := db.AckOutbox(ctx, st.Epoch, 4); err != nil {
		t.Fatal(err)
	}
	if err := db.AckOutbox(ctx, "another-epoch", 6); err != nil {
		t.Fatal(err)
	}
	st, _ = db.OutboxState(ctx)
	if st.Acked != 4 || st.Pending != st.Last-4 {
		t.Fatalf("after acks: %+v", st)
	}
	// A hub restored from a backup asks for 3 again.
	if err := db.ResendFrom(ctx, st.Epoch, 3); err != nil {
		t.Fatal(err)
	}
	if st, _ = db.OutboxState(ctx); st.Acked != 2 {
		t.Fatalf("resend from 3: acked %d", st.Acked)
	}
	if err := db.AckOutbox(ctx, st.Epoch, 4); err != nil {
		t.Fatal(err)
	}
	// Pruned up to the acknowledged ones noted before now: 1-4 go, and 3 cannot be
	// sent again.
	n, err := db.PruneOutbox(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 4 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if err := db.ResendFrom(ctx, st.Epoch, 3); err == nil {
		t.Fatal("resent records the outbox no longer holds")
	}
	if err := db.ResendFrom(ctx, st.Epoch, 5); err != nil {
		t.Fatalf("resend of what is held: %v", err)
	}
}

// TestBackupStartsANewEpoch: a copy written by Backup starts a new epoch when opened,
// at its oldest unsent record, with a snapshot; the original keeps its own.
func TestBackupStartsANewEpoch(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	st, err := db.EnableOutbox(ctx, "https://hub.example")
	if err != nil {
		t.Fatal(err)
	}
	p := mustID[int64](t)(db.Create(ctx, Platforms, Values{"name": "EOS", "slug": "eos"}, All))
	if err := db.AckOutbox(ctx, st.Epoch, st.Last); err != nil { // the enable's snapshot is sent
		t.Fatal(err)
	}
	unsent := st.Last + 1
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := db.Backup(ctx, copyPath); err != nil {
		t.Fatal(err)
	}
	if again, _ := db.OutboxState(ctx); again.Epoch != st.Epoch {
		t.Fatal("the backup changed the original's epoch")
	}
	cp, err := Open(ctx, copyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	got, err := cp.OutboxState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch == st.Epoch || got.Instance != st.Instance || got.EpochStart != unsent || got.Acked != unsent-1 {
		t.Fatalf("copy: %+v, original %+v", got, st)
	}
	want := []string{fmt.Sprintf("platform upsert %d", p), fmt.Sprintf("platform upsert %d", p), "snapshot upsert 0"}
	if rows := outboxRows(t, cp, got.EpochStart); !slices.Equal(rows, want) {
		t.Fatalf("the copy's epoch holds %v, want %v", rows, want)
	}
	// Opened a second time, it keeps the epoch it took.
	cp.Close()
	cp2, err := Open(ctx, copyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cp2.Close()
	if again, _ := cp2.OutboxState(ctx); again.Epoch != got.Epoch {
		t.Fatal("a second opening started another epoch")
	}
}

// TestRetentionKeepsUnsentLogs: a retention prune deletes the old logs the hub stored
// and keeps those it has not.
func TestRetentionKeepsUnsentLogs(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	old := time.Now().Add(-48 * time.Hour)
	write := func() int64 {
		id, err := db.CreateLog(ctx, Values{"command_name": "c", "device_name": "d", "username": "u", "success": true,
			"created": old})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := write() // before the outbox: no record
	st, err := db.EnableOutbox(ctx, "https://hub.example")
	if err != nil {
		t.Fatal(err)
	}
	sent, unsent := write(), write()
	recs, _ := db.OutboxRecords(ctx, st.EpochStart, 100)
	if err := db.AckOutbox(ctx, st.Epoch, recs[len(recs)-2].Seq); err != nil { // all but the last log's
		t.Fatal(err)
	}
	n, err := db.PruneLogs(ctx, time.Now().Add(-time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want the two stored ones", n, err)
	}
	ids, err := scalars[int64](ctx, db.r, `SELECT id FROM command_logs ORDER BY id`)
	if err != nil || !slices.Equal(ids, []int64{unsent}) {
		t.Fatalf("kept %v (first %d, sent %d), want only %d", ids, first, sent, unsent)
	}
	// Once off, the hub's backlog no longer holds retention.
	if _, err := db.DisableOutbox(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := db.PruneLogs(ctx, time.Now().Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v with the outbox off", n, err)
	}
}
