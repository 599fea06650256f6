package handlers

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// The log sweep: a generated data set of logs over many devices, users, commands,
// outcomes and days, and a sweep of list pages (orderings × filters × offsets ×
// cursors × viewers × searches) and statistics through the API, each compared with a
// plain reference: SQL over command_logs (the filters, the viewers' scopes and the
// orderings written out by hand, not through the store's compiler), and ?q='s matches
// found in Go (a name that holds q, or every word of q among an output's or error
// message's or notes' words). The sweep runs three times: on logs written in created
// order; after what moves logs out of it (devices, a command and a user deleted, logs
// written late, a retention prune, a device moved to another site); after notes are
// written on some logs, and changed on some.

var updateSweep = flag.Bool("update-sweep", false, "rewrite testdata/logsweep.golden from today's answers")

// sweepSize is how many logs the sweep generates: fewer under -short (the race run).
func sweepSize() int {
	if testing.Short() {
		return 2_500
	}
	return 8_000
}

// sweepWorld is the generated data set and what the reference needs of it.
type sweepWorld struct {
	e        *env
	rng      *rand.Rand
	sites    []string         // slugs
	devices  []int64          // ids, in creation order
	devNames map[int64]string // id → name
	commands []int64
	cmdNames map[int64]string
	users    map[string]int64 // username → id
	names    []string         // the users who run commands
	viewers  []sweepViewer
	now      time.Time // the clock: statistics' last 24 hours end here
	state    int       // 0 before disturb, 1 after
	lists    int       // lists and pages checked
	pages    int
	words    []string // the outputs' vocabulary, most common first
}

// sweepViewer is a token and the SQL of the logs its permission lets it see.
type sweepViewer struct {
	name, token, sql string
}

const sweepBase = "2026-02-01T00:00:00Z"

func newSweepWorld(t *testing.T) *sweepWorld {
	e := newEnv(t)
	w := &sweepWorld{e: e, rng: rand.New(rand.NewPCG(39, 2026)), devNames: map[int64]string{},
		cmdNames: map[int64]string{}, users: map[string]int64{}}
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	w.sites = []string{"north", "south", "east", "west", "lab"}
	siteIDs := map[string]int64{}
	for _, s := range w.sites {
		siteIDs[s] = tkSite(t, e.db, strings.ToUpper(s[:1])+s[1:], s)
	}
	for i := range 40 {
		site := w.sites[i%len(w.sites)]
		name := fmt.Sprintf("rtr-%s-%02d", site, i)
		id := tkDevice(t, e.db, name, siteIDs[site], ios)
		w.devices, w.devNames[id] = append(w.devices, id), name
	}
	verbs := []string{"show interfaces", "show version", "show ip route", "show vlan", "show bgp summary", "configure hostname"}
	for i := range 24 {
		name := fmt.Sprintf("%s %02d", verbs[i%len(verbs)], i)
		typ := "show"
		if strings.HasPrefix(name, "configure") {
			typ = "config"
		}
		id := tkExec(t, e.db, `INSERT INTO commands (name, command, command_type, created, last_updated) VALUES (?, ?, ?, ?, ?)`,
			name, name, typ, tkNow, tkNow)
		w.commands, w.cmdNames[id] = append(w.commands, id), name
	}
	w.names = []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	tokens := map[string]string{}
	for _, u := range append(slices.Clone(w.names), "vera") {
		tokens[u] = e.user(u, false)
		w.users[u], _ = e.db.UserIDByName(t.Context(), u)
	}
	w.words = []string{"interface", "up", "line", "protocol", "down", "vlan", "bgp", "neighbor", "established", "idle",
		"packets", "input", "errors", "crc", "mtu", "duplex", "full", "half", "speed", "route", "static", "ospf", "area"}
	for i := range 120 {
		w.words = append(w.words, "kw"+string(rune('a'+i/26%26))+string(rune('a'+i%26)))
	}
	w.words = append(w.words, "xylophone")
	// Viewers: vera sees the logs of two sites' devices; dave sees those of a list of
	// devices and his own.
	e.grant("vera", store.TypeCommandLog, []string{"view"}, `{"device__site__slug__in": ["north", "lab"]}`)
	some := []int64{w.devices[1], w.devices[2], w.devices[7], w.devices[11], w.devices[30]}
	list, _ := json.Marshal(some)
	e.grant("dave", store.TypeCommandLog, []string{"view"}, `[{"device__in": `+string(list)+`}, {"user": "$user"}]`)
	w.viewers = []sweepViewer{
		{"superuser", e.admin, "1"},
		{"vera", tokens["vera"], `device_id IN (SELECT d.id FROM devices d JOIN sites s ON s.id = d.site_id WHERE s.slug IN ('north', 'lab'))`},
		{"dave", tokens["dave"], fmt.Sprintf(`(device_id IN (%s) OR user_id = %d)`, joinInts(some), w.users["dave"])},
	}
	return w
}

func joinInts(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// skewed is a random index below n that favours the low ones: some devices, commands
// and words are common, most are rare.
func (w *sweepWorld) skewed(n int, power float64) int {
	return min(n-1, int(float64(n)*math.Pow(w.rng.Float64(), power)))
}

// sweepErrors are the failed logs' messages: a few common, one set of many.
var sweepErrors = []string{"% Invalid input detected at '^' marker.", "Timed out after 30 s",
	"Authentication failed for admin", "Connection refused by 10.0.0.%d", "% Ambiguous command: \"sh int\"",
	"Invalid input (case %d)"}

// logAt is one generated log created at at.
func (w *sweepWorld) logAt(at time.Time) store.Values {
	dev := w.devices[w.skewed(len(w.devices), 2)]
	cmd := w.commands[w.skewed(len(w.commands), 1.5)]
	user := w.names[w.skewed(len(w.names), 1.3)]
	var out []string
	for range 3 + w.rng.IntN(10) {
		word := w.words[w.skewed(len(w.words), 2.5)]
		if w.rng.IntN(7) == 0 {
			word = strings.ToUpper(word[:1]) + word[1:]
		}
		out = append(out, word)
	}
	if w.rng.IntN(3) == 0 {
		out = append(out, fmt.Sprintf("Gi0/%d,", w.rng.IntN(48)), fmt.Sprintf("\n%d packets", w.rng.IntN(1000)))
	}
	v := store.Values{"command": cmd, "command_name": w.cmdNames[cmd], "device": dev, "device_name": w.devNames[dev],
		"user": w.users[user], "username": user, "output": strings.Join(out, " "), "success": true,
		"execution_duration": float64(w.rng.IntN(300)) / 10, "created": at, "sent_command": w.cmdNames[cmd],
		"client_address": fmt.Sprintf("10.%d.0.%d", w.rng.IntN(3), 1+w.rng.IntN(20))}
	if strings.HasPrefix(w.cmdNames[cmd], "configure") {
		v["command_type"] = "config"
	}
	if src := []string{"api", "bulk", "ui", ""}[w.rng.IntN(4)]; src != "" {
		v["source"] = src
	}
	switch r := w.rng.IntN(100); {
	case r < 3:
		v["success"], v["error_message"] = false, "Cancelled by "+user+"; the output so far is kept."
		v["failure"] = map[string]any{"phase": "command", "reason": "cancelled", "cancelled_by": user}
	case r < 20:
		msg := sweepErrors[w.skewed(len(sweepErrors), 1.5)]
		if strings.Contains(msg, "%d") {
			msg = fmt.Sprintf(msg, w.rng.IntN(12))
		}
		v["success"], v["error_message"] = false, msg
		v["failure"] = map[string]any{"phase": "command", "reason": "error"}
	}
	return v
}

// fill writes n logs over the 60 days from sweepBase, in created order (every ninth at
// the same time as the one before), mostly in bulk, the last ones one by one.
func (w *sweepWorld) fill(t *testing.T, n int) {
	base, _ := time.Parse(time.RFC3339, sweepBase)
	step := 60 * 24 * time.Hour / time.Duration(n)
	var batch []store.Values
	at := base
	for i := range n {
		if i%9 != 8 {
			at = base.Add(time.Duration(i)*step + time.Duration(w.rng.IntN(int(step/time.Second)))*time.Second/2)
		}
		v := w.logAt(at)
		if i >= n-60 {
			if _, err := w.e.db.CreateLog(t.Context(), v); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if batch = append(batch, v); len(batch) == 1000 || i == n-61 {
			if err := w.e.db.InsertLogs(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	w.now = at.Add(2 * time.Hour)
	w.e.db.SetClock(func() time.Time { return w.now })
}

// disturb does what moves logs out of the order and places they were written in: two
// devices, a command and a user deleted (their logs keep the names), logs written late
// (older than the newest), the oldest logs pruned, a device moved to another site.
func (w *sweepWorld) disturb(t *testing.T) {
	ctx := t.Context()
	base, _ := time.Parse(time.RFC3339, sweepBase)
	var late []store.Values
	for range sweepSize() / 40 {
		late = append(late, w.logAt(base.Add(time.Duration(w.rng.Int64N(int64(55*24*time.Hour))))))
	}
	if err := w.e.db.InsertLogs(ctx, late); err != nil {
		t.Fatal(err)
	}
	for _, del := range []struct {
		m  *store.Model
		id int64
	}{{store.Devices, w.devices[3]}, {store.Devices, w.devices[11]}, {store.Commands, w.commands[2]}, {store.Users, w.users["frank"]}} {
		if err := w.e.db.Delete(ctx, del.m, del.id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.e.db.PruneLogs(ctx, base.Add(3*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	tkExec(t, w.e.db, `UPDATE devices SET site_id = (SELECT id FROM sites WHERE slug = 'lab') WHERE id = ?`, w.devices[5])
}

// annotate writes notes on some logs, as a person does after the fact, then changes
// some of them: the search must follow both.
func (w *sweepWorld) annotate(t *testing.T) {
	for _, n := range []struct{ every, rest int }{{17, 0}, {17, 5}, {51, 0}} {
		note := fmt.Sprintf("maintenance window, ticket CHG%d", 1000+n.rest)
		if n.every == 51 {
			note = "rolled back; see incident INC7"
		}
		tkExec(t, w.e.db, `UPDATE command_logs SET notes = ? WHERE id % ? = ?`, note, n.every, n.rest)
	}
}

// sweepNoteSearches are searches of words in notes alone: the first written on logs
// whose notes were changed after.
var sweepNoteSearches = []string{"maintenance", "CHG1005", "CHG1000", "incident", "ticket CHG1000"}

// sweepFilter is a list's filters as the API takes them and as the reference's SQL.
type sweepFilter struct{ query, sql string }

// filters are the sweep's filters, alone and together.
func (w *sweepWorld) filters() []sweepFilter {
	busy, rare, gone := w.devices[0], w.devices[37], w.devices[3]
	created := func(day int) string {
		base, _ := time.Parse(time.RFC3339, sweepBase)
		return base.AddDate(0, 0, day).Format("2006-01-02")
	}
	stamp := func(day int) string {
		base, _ := time.Parse(time.RFC3339, sweepBase)
		return store.Stamp(base.AddDate(0, 0, day))
	}
	return []sweepFilter{
		{"", "1"},
		{fmt.Sprintf("device_id=%d", busy), fmt.Sprintf("device_id = %d", busy)},
		{fmt.Sprintf("device_id=%d", rare), fmt.Sprintf("device_id = %d", rare)},
		{fmt.Sprintf("device_id=%d&device_id=%d", busy, w.devices[1]), fmt.Sprintf("device_id IN (%d, %d)", busy, w.devices[1])},
		{fmt.Sprintf("device_id=%d", gone), fmt.Sprintf("device_id = %d", gone)},
		{"device_id=null", "device_id IS NULL"},
		{fmt.Sprintf("command_id=%d", w.commands[0]), fmt.Sprintf("command_id = %d", w.commands[0])},
		{fmt.Sprintf("command_id=%d", w.commands[2]), fmt.Sprintf("command_id = %d", w.commands[2])},
		{fmt.Sprintf("user_id=%d", w.users["bob"]), fmt.Sprintf("user_id = %d", w.users["bob"])},
		{fmt.Sprintf("user_id=%d", w.users["frank"]), fmt.Sprintf("user_id = %d", w.users["frank"])},
		{"username=frank", "username = 'frank'"},
		{"username__ic=AR", "username LIKE '%ar%'"},
		{"username__n=alice", "username <> 'alice'"},
		{"success=false", "success = 0"},
		{"success=true", "success = 1"},
		{"source=ui", "source = 'ui'"},
		{"client_address__isw=10.1.", "client_address LIKE '10.1.%'"},
		{"created__gte=" + created(20), "created >= '" + stamp(20) + "'"},
		{"created__gte=" + created(10) + "&created__lte=" + created(12), "created >= '" + stamp(10) + "' AND created <= '" + stamp(12) + "'"},
		{"created__lt=" + created(2), "created < '" + stamp(2) + "'"},
		{"id__gte=1000&id__lt=3000", "id >= 1000 AND id < 3000"},
		{fmt.Sprintf("device_id=%d&success=false", busy), fmt.Sprintf("device_id = %d AND success = 0", busy)},
		{"success=false&created__gte=" + created(30), "success = 0 AND created >= '" + stamp(30) + "'"},
		{fmt.Sprintf("user_id=%d&created__gte=%s", w.users["carol"], created(40)), fmt.Sprintf("user_id = %d AND created >= '%s'", w.users["carol"], stamp(40))},
		{fmt.Sprintf("device_id=%d&created__gte=%s&created__lte=%s", w.devices[2], created(5), created(50)),
			fmt.Sprintf("device_id = %d AND created >= '%s' AND created <= '%s'", w.devices[2], stamp(5), stamp(50))},
		{"username=alice&success=true", "username = 'alice' AND success = 1"},
		{fmt.Sprintf("command_id=%d&device_id=%d", w.commands[1], busy), fmt.Sprintf("command_id = %d AND device_id = %d", w.commands[1], busy)},
	}
}

// sweepOrdering is an ordering as the API takes it and the reference's ORDER BY: a
// field with an index of its own breaks ties by created, then id, in its direction;
// any other ordering by id in its first term's direction.
type sweepOrdering struct{ param, sql string }

var sweepOrderings = []sweepOrdering{
	{"", "created DESC, id DESC"},
	{"created", "created, id"},
	{"-created", "created DESC, id DESC"},
	{"id", "id"},
	{"-id", "id DESC"},
	{"username", "username, created, id"},
	{"-username", "username DESC, created DESC, id DESC"},
	{"success", "success, created, id"},
	{"-success", "success DESC, created DESC, id DESC"},
	{"execution_duration", "execution_duration, created, id"},
	{"-execution_duration", "execution_duration DESC, created DESC, id DESC"},
	{"last_updated", "last_updated, id"},
	{"username,-created", "username, created DESC, id"},
	{"-success,execution_duration", "success DESC, execution_duration, id DESC"},
}

// sweepSearches are the ?q= of the sweep: words common and rare, in another case, of an
// error message, several at once, parts of names, one or two characters, none.
var sweepSearches = []string{"interface", "INTERFACE", "xylophone", "kwab", "case 7", "Invalid input", "rtr-north",
	"show int", "bob", "al", "7", "--", "10.0.0", "Gi0/4", "zzzz", "up down", "packets"}

// sweepLog is what the reference reads of a log for ?q=.
type sweepLog struct {
	id    int64
	names [3]string  // command, device, user, lower case
	texts [][]string // the words of the output, the error message and the notes
}

// reference answers the sweep's questions from the database with plain SQL.
type reference struct {
	t    *testing.T
	db   *sql.DB
	logs []sweepLog
}

func (w *sweepWorld) reference(t *testing.T) *reference {
	ref := &reference{t: t, db: w.e.db.Reader()}
	rows, err := ref.db.Query(`SELECT id, command_name, device_name, username, output, error_message, notes FROM command_logs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var l sweepLog
		var output, message, notes string
		if err := rows.Scan(&l.id, &l.names[0], &l.names[1], &l.names[2], &output, &message, &notes); err != nil {
			t.Fatal(err)
		}
		for i, n := range l.names {
			l.names[i] = strings.ToLower(n)
		}
		l.texts = [][]string{words(output), words(message), words(notes)}
		ref.logs = append(ref.logs, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ref
}

// words are the words of a text as the word index holds them: runs of letters and
// digits, lower case (the sweep's texts are ASCII).
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// holds reports whether the words of a text hold phrase as consecutive words.
func holds(text, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(text); i++ {
		if slices.Equal(text[i:i+len(phrase)], phrase) {
			return true
		}
	}
	return false
}

// matches is ?q='s condition on one log: a name holds q (ignoring ASCII case), or each
// word of q with a letter or digit is, as a phrase of its own words, in the output, the
// error message or the notes.
func matches(l sweepLog, q string) bool {
	for _, n := range l.names {
		if strings.Contains(n, strings.ToLower(q)) {
			return true
		}
	}
	any := false
	for _, w := range strings.Fields(q) {
		phrase := words(w)
		if len(phrase) == 0 {
			continue
		}
		any = true
		if !slices.ContainsFunc(l.texts, func(text []string) bool { return holds(text, phrase) }) {
			return false
		}
	}
	return any
}

// searchSQL is the reference's condition for ?q=: the ids of the matching logs.
func (ref *reference) searchSQL(q string) string {
	if q == "" {
		return "1"
	}
	var ids []int64
	for _, l := range ref.logs {
		if matches(l, q) {
			ids = append(ids, l.id)
		}
	}
	if len(ids) == 0 {
		return "0"
	}
	return "id IN (" + joinInts(ids) + ")"
}

// ids is the whole list in order.
func (ref *reference) ids(where, order string) []int64 {
	rows, err := ref.db.Query(`SELECT id FROM command_logs WHERE ` + where + ` ORDER BY ` + order)
	if err != nil {
		ref.t.Fatalf("reference: %v: %s", err, where)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			ref.t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// sweepPage is what the API answered for a list page.
type sweepPage struct {
	status     int
	count      int
	ids        []int64
	next, prev string
}

func (w *sweepWorld) get(t *testing.T, token, path string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Token "+token)
	rec := httptest.NewRecorder()
	w.e.api.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func (w *sweepWorld) page(t *testing.T, token, query string) sweepPage {
	t.Helper()
	status, body := w.get(t, token, logPath+"?"+query)
	p := sweepPage{status: status}
	if status != http.StatusOK {
		return p
	}
	var m struct {
		Count          int
		Next, Previous *string
		Results        []struct{ ID int64 }
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v: %s", query, err, body)
	}
	p.count = m.Count
	for _, r := range m.Results {
		p.ids = append(p.ids, r.ID)
	}
	if m.Next != nil {
		p.next = *m.Next
	}
	if m.Previous != nil {
		p.prev = *m.Previous
	}
	return p
}

// sweepRecord collects what the API answered, for the golden file: one digest of the
// answers per state, viewer and list (its filters and search, in every ordering).
type sweepRecord struct {
	lines []string
	sums  map[string]*[]string
}

func (r *sweepRecord) add(group, answer string) {
	if r.sums == nil {
		r.sums = map[string]*[]string{}
	}
	s, ok := r.sums[group]
	if !ok {
		s = &[]string{}
		r.sums[group] = s
		r.lines = append(r.lines, group)
	}
	*s = append(*s, answer)
}

func (r *sweepRecord) golden() string {
	var b strings.Builder
	for _, g := range r.lines {
		h := sha256.Sum256([]byte(strings.Join(*r.sums[g], "\n")))
		fmt.Fprintf(&b, "%s %s\n", hex.EncodeToString(h[:8]), g)
	}
	return b.String()
}

// checkList compares one list (viewer, filters, search, ordering) page by page with the
// reference: the first page, one in the middle, the last, the one past the end, and a
// walk with cursors when walk is set.
func (w *sweepWorld) checkList(t *testing.T, ref *reference, rec *sweepRecord, v sweepViewer, f sweepFilter, q string, o sweepOrdering, walk bool) {
	t.Helper()
	want := ref.ids(v.sql+" AND "+f.sql+" AND "+ref.searchSQL(q), o.sql)
	w.lists++
	base := url.Values{}
	if f.query != "" {
		parsed, err := url.ParseQuery(f.query)
		if err != nil {
			t.Fatal(err)
		}
		base = parsed
	}
	if q != "" {
		base.Set("q", q)
	}
	group := fmt.Sprintf("%d %s ?%s", w.state, v.name, base.Encode())
	if w.state > 1 {
		rec = &sweepRecord{} // the golden file holds the answers of before notes were kept
	}
	if o.param != "" {
		base.Set("ordering", o.param)
	}
	base.Set("fields", "id")
	n := len(want)
	type at struct{ offset, limit int }
	pages := []at{{0, 50}, {n / 2, 20}, {max(0, n-7), 10}, {n, 50}}
	if n > 1200 {
		pages = append(pages, at{517, 1000})
	}
	for _, pg := range pages {
		params := cloneValues(base)
		params.Set("limit", strconv.Itoa(pg.limit))
		if pg.offset > 0 {
			params.Set("offset", strconv.Itoa(pg.offset))
		}
		got := w.page(t, v.token, params.Encode())
		w.pages++
		rec.add(group, fmt.Sprintf("%s %d %d %v", params.Encode(), got.status, got.count, got.ids))
		if pg.offset > 0 && pg.offset >= n {
			if got.status != http.StatusNotFound {
				t.Fatalf("%s ?%s: status %d past the end (%d logs), want 404", v.name, params.Encode(), got.status, n)
			}
			continue
		}
		end := min(n, pg.offset+pg.limit)
		if got.status != http.StatusOK || got.count != n || !slices.Equal(got.ids, want[pg.offset:end]) ||
			(got.next != "") != (end < n) || (got.prev != "") != (pg.offset > 0) {
			t.Fatalf("%s ?%s: status %d, count %d, ids %v, next %q, previous %q;\nwant count %d, ids %v",
				v.name, params.Encode(), got.status, got.count, head(got.ids), got.next, got.prev, n, head(want[pg.offset:end]))
		}
	}
	if !walk {
		return
	}
	params := cloneValues(base)
	params.Set("cursor", "")
	params.Set("limit", strconv.Itoa(min(1000, max(50, n/8))))
	path := params.Encode()
	var seen []int64
	for pages := 0; path != ""; pages++ {
		got := w.page(t, v.token, path)
		w.pages++
		if got.status != http.StatusOK || got.count != n || pages > 20 {
			t.Fatalf("%s ?%s: cursor page %d: status %d, count %d, want %d", v.name, path, pages, got.status, got.count, n)
		}
		seen, path = append(seen, got.ids...), ""
		if got.next != "" {
			u, err := url.Parse(got.next)
			if err != nil {
				t.Fatal(err)
			}
			path = u.RawQuery
		}
	}
	rec.add(group, fmt.Sprintf("%s walk %v", params.Encode(), seen))
	if !slices.Equal(seen, want) {
		t.Fatalf("%s ?%s: a cursor walk saw %d logs %v, want %d %v", v.name, params.Encode(), len(seen), head(seen), n, head(want))
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// head is the start of a long list of ids, for a message.
func head(ids []int64) []int64 { return ids[:min(len(ids), 12)] }

// checkStatistics compares a viewer's statistics with the reference's.
func (w *sweepWorld) checkStatistics(t *testing.T, ref *reference, rec *sweepRecord, v sweepViewer) {
	t.Helper()
	// A cancelled execution is a log, and its command's, but neither a success nor a
	// failure: no failure, no error, not in the success rate.
	const cancelled = `(success = 0 AND json_extract(failure, '$.reason') = 'cancelled')`
	var total, ok, off, dayTotal, dayOK, dayOff int64
	since := store.Stamp(w.now.Add(-24 * time.Hour))
	if err := ref.db.QueryRow(`SELECT count(*), coalesce(sum(success), 0), count(*) FILTER (WHERE `+cancelled+`),
		count(*) FILTER (WHERE created >= ?1), coalesce(sum(success) FILTER (WHERE created >= ?1), 0),
		count(*) FILTER (WHERE created >= ?1 AND `+cancelled+`)
		FROM command_logs WHERE `+v.sql, since).Scan(&total, &ok, &off, &dayTotal, &dayOK, &dayOff); err != nil {
		t.Fatal(err)
	}
	rate := 0.0
	if total > off {
		rate = math.Round(float64(ok)*10000/float64(total-off)) / 100
	}
	top := ref.counts(`SELECT command_name, count(*) AS n FROM command_logs WHERE ` + v.sql +
		` GROUP BY command_name ORDER BY n DESC, command_name LIMIT 10`)
	errs := ref.counts(`SELECT substr(error_message, 1, 100) AS e, count(*) AS n FROM command_logs WHERE success = 0 AND NOT ` +
		cancelled + ` AND ` + v.sql + ` GROUP BY e ORDER BY n DESC, e LIMIT 10`)
	want := map[string]any{"total_logs": total, "success_rate": rate,
		"last_24h":     map[string]any{"total": dayTotal, "successful": dayOK, "failed": dayTotal - dayOK - dayOff},
		"top_commands": named(top, "command_name"), "common_errors": named(errs, "error")}
	raw, _ := json.Marshal(want)
	status, body := w.get(t, v.token, statsPath)
	if got := canonical(t, body); status != http.StatusOK || got != canonical(t, raw) {
		t.Fatalf("%s statistics: %d %s\nwant %s", v.name, status, got, canonical(t, raw))
	}
}

type nameCount struct {
	name string
	n    int64
}

func (ref *reference) counts(query string) []nameCount {
	rows, err := ref.db.Query(query)
	if err != nil {
		ref.t.Fatal(err)
	}
	defer rows.Close()
	var out []nameCount
	for rows.Next() {
		var c nameCount
		if err := rows.Scan(&c.name, &c.n); err != nil {
			ref.t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func named(cs []nameCount, key string) []any {
	out := []any{}
	for _, c := range cs {
		out = append(out, map[string]any{key: c.name, "count": c.n})
	}
	return out
}

// TestLogSweepAgreesWithReference is the sweep. Every list of every viewer and filter
// is checked in every ordering (with a cursor walk in a few), and every search in
// several orderings and filters; -short checks a part of them, on fewer logs.
func TestLogSweepAgreesWithReference(t *testing.T) {
	w := newSweepWorld(t)
	w.fill(t, sweepSize())
	rec := &sweepRecord{}
	for state, prepare := range []func(){func() {}, func() { w.disturb(t) }, func() { w.annotate(t) }} {
		prepare()
		w.state = state
		ref := w.reference(t)
		filters := w.filters()
		step := 1
		if testing.Short() {
			step = 3
		}
		i := 0
		for _, v := range w.viewers {
			w.checkStatistics(t, ref, rec, v)
			for fi, f := range filters {
				for oi, o := range sweepOrderings {
					if i++; i%step != 0 {
						continue
					}
					w.checkList(t, ref, rec, v, f, "", o, (fi+oi)%7 == 0)
				}
			}
			searches := sweepSearches
			if state == 2 {
				searches = append(slices.Clip(searches), sweepNoteSearches...)
			}
			for si, q := range searches {
				for oi, o := range sweepOrderings {
					if i++; i%step != 0 || (si+oi)%3 != 0 {
						continue
					}
					f := filters[(si*5+oi)%len(filters)]
					if oi%2 == 0 {
						f = filters[0]
					}
					w.checkList(t, ref, rec, v, f, q, o, (si+oi)%4 == 0)
				}
			}
		}
		t.Logf("state %d: %d logs; %d lists and %d pages checked so far", state, len(ref.logs), w.lists, w.pages)
	}
	if testing.Short() {
		return
	}
	golden := filepath.Join("testdata", "logsweep.golden")
	if *updateSweep {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(rec.golden()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./handlers -run TestLogSweep -update-sweep writes it)", err)
	}
	if got := rec.golden(); got != string(want) {
		t.Fatalf("the sweep's answers differ from %s's", golden)
	}
}
