package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// heldCols are the columns of every log held beside its device and outcome (heldKeys),
// by the log's offset from the keys' base, so that a page ordered by the duration, the
// user name or the outcome under any filter on those, the command, the user and
// created is found in memory (heldPage) rather than by walking the column's index and
// reading each log's row. Empty when not held: then pages are read as before. At five
// million logs they hold 80 MB beside the devices' 20 MB, and take 6 s of one core
// to read.
type heldCols struct {
	dur     []float64 // execution_duration
	durb    []uint16  // its bucket (durationBucket), which a page counts by
	cmd     []int32   // command_id, 0 for none
	cls     []uint16  // the log's user and user name: an index into classes
	classes *userClasses
}

// heldColsCap bounds a command id the columns hold, as deviceKeysCap bounds a device's.
const heldColsCap = deviceKeysCap

// userClass is one pair of a log's user (0 for none) and user name.
type userClass struct {
	user int64
	name string
}

// userClasses are the pairs of user and user name the held logs have: never changed
// once sealed (a catch-up that meets a new pair makes new ones), so that readers of an
// older heldKeys keep theirs.
type userClasses struct {
	list  []userClass
	index map[userClass]uint16
	rank  []uint16 // rank[c]: the place of list[c].name among the distinct names, in byte order
	doc   string   // list as JSON pairs, for conditions to be tested against (classesOf)
}

func (c heldCols) held() bool { return c.classes != nil }

// add gives pair p a class in c, which must be c's own (newClasses, or a clone), and
// false past the bound of uint16. Seal makes the names' ranks after.
func (c *userClasses) add(p userClass) (uint16, bool) {
	if i, ok := c.index[p]; ok {
		return i, true
	}
	if len(c.list) > math.MaxUint16 {
		return 0, false
	}
	c.list = append(c.list, p)
	c.index[p] = uint16(len(c.list) - 1)
	return uint16(len(c.list) - 1), true
}

func newClasses() *userClasses { return &userClasses{index: map[userClass]uint16{}} }

func (c *userClasses) clone() *userClasses {
	return &userClasses{list: slices.Clone(c.list), index: maps.Clone(c.index)}
}

// seal ranks the classes' names in byte order (SQLite's for text) and writes doc.
func (c *userClasses) seal() {
	names := make([]string, len(c.list))
	pairs := make([][2]any, len(c.list))
	for i, p := range c.list {
		names[i], pairs[i] = p.name, [2]any{p.user, p.name}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	c.rank = make([]uint16, len(c.list))
	for i, p := range c.list {
		r, _ := slices.BinarySearch(names, p.name)
		c.rank[i] = uint16(r)
	}
	doc, _ := json.Marshal(pairs)
	c.doc = string(doc)
}

// from is the columns from offset off on, with room for extra more; empty ones when
// they are not held.
func (c heldCols) from(off int64, extra int) heldCols {
	if !c.held() {
		return heldCols{}
	}
	off = min(off, int64(len(c.dur)))
	n := heldRoom(len(c.dur) - int(off) + max(extra, 0))
	return heldCols{
		dur:     append(make([]float64, 0, n), c.dur[off:]...),
		durb:    append(make([]uint16, 0, n), c.durb[off:]...),
		cmd:     append(make([]int32, 0, n), c.cmd[off:]...),
		cls:     append(make([]uint16, 0, n), c.cls[off:]...),
		classes: c.classes,
	}
}

// heldRoom is the capacity the held keys and columns of n logs are made with: room for
// the logs written next, so that the first catch-ups append in place. Without it the
// first catch-up after a read copied every column (100 MB at five million logs) inside
// the request that made it: 128–164 ms for a page that takes 6 ms at a million.
func heldRoom(n int) int { return n + n/8 + 1024 }

// grow makes the held columns n long.
func (c *heldCols) grow(n int) {
	if !c.held() {
		return
	}
	for len(c.dur) < n {
		c.dur, c.durb, c.cmd, c.cls = append(c.dur, 0), append(c.durb, 0), append(c.cmd, 0), append(c.cls, 0)
	}
}

// setCols records the columns of the log at offset i, false past their bounds. A pair
// of user and name not held makes c's classes a clone, once (own); seal them after.
func (c *heldCols) setCols(i int64, dur float64, command, user int64, name string, own *bool) bool {
	if command < 0 || command >= heldColsCap {
		return false
	}
	p := userClass{user, name}
	if _, ok := c.classes.index[p]; !ok && !*own {
		c.classes, *own = c.classes.clone(), true
	}
	cls, ok := c.classes.add(p)
	c.dur[i], c.durb[i], c.cmd[i], c.cls[i] = dur, durationBucket(dur), int32(command), cls
	return ok
}

// readHeldCols reads the held columns of the logs keys holds, in tx's snapshot: each
// along an index that holds it, with the id, without the table (a second or so each at
// five million logs). Past their bounds (a command id, more pairs of user and name than
// uint16 holds), none are held.
func readHeldCols(ctx context.Context, tx *sql.Tx, keys *heldKeys) error {
	n, room := len(keys.keys), heldRoom(len(keys.keys))
	cols := heldCols{dur: make([]float64, n, room), durb: make([]uint16, n, room), cmd: make([]int32, n, room), cls: make([]uint16, n, room),
		classes: newClasses()}
	v := &deviceView{keys: keys, cols: &cols, users: make([]int32, n)}
	h := deviceViews.add(v)
	defer deviceViews.drop(h)
	for _, read := range []string{
		`SELECT fieldkit_log_cols_read(?, 0, id, execution_duration) FROM command_logs INDEXED BY command_logs_duration`,
		`SELECT fieldkit_log_cols_read(?, 1, id, coalesce(command_id, 0)) FROM command_logs INDEXED BY command_logs_command`,
		`SELECT fieldkit_log_cols_read(?, 2, id, coalesce(user_id, 0)) FROM command_logs INDEXED BY command_logs_user`,
		`SELECT fieldkit_log_cols_read(?, 3, id, username) FROM command_logs INDEXED BY command_logs_username`,
	} {
		var got sql.NullInt64
		if err := tx.QueryRowContext(ctx, read, h).Scan(&got); err != nil {
			return err
		}
		if !got.Valid {
			return nil // past a bound: the devices alone
		}
	}
	// The buckets after, in id order: written along the durations' index, each would
	// be a cache miss of its own.
	for i, d := range cols.dur {
		cols.durb[i] = durationBucket(d)
	}
	cols.classes.seal()
	keys.heldCols = cols
	return nil
}

// colReader is the aggregate fieldkit_log_cols_read(view, column, id, value): it sets
// one held column of each log (0 the duration, 1 the command, 2 the user, 3 the user
// name, which must come after the user), and is the number of logs, or NULL when a
// value was past the columns' bounds.
type colReader struct {
	deviceCounter
	last      userClass // the last log's pair of user and name, and its class
	lastClass uint16
}

func (c *colReader) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if err := c.view(args); err != nil {
		return err
	}
	col, _ := args[1].(int64)
	id, _ := args[2].(int64)
	k, cols := c.v.keys, c.v.cols
	if id < k.base || id > k.upto || c.v.missing {
		c.v.missing = true
		return nil
	}
	i := id - k.base
	switch col {
	case 0:
		switch d := args[3].(type) {
		case float64:
			cols.dur[i] = d
		case int64:
			cols.dur[i] = float64(d)
		}
	case 1:
		cmd, _ := args[3].(int64)
		if cmd < 0 || cmd >= heldColsCap {
			c.v.missing = true
			return nil
		}
		cols.cmd[i] = int32(cmd)
	case 2:
		user, _ := args[3].(int64)
		if user < 0 || user > math.MaxInt32 {
			c.v.missing = true
			return nil
		}
		c.v.users[i] = int32(user)
	case 3:
		// Along the names' index, a run of logs has one name and mostly one user.
		name, _ := args[3].(string)
		p := userClass{int64(c.v.users[i]), name}
		if p != c.last || c.n == 0 {
			cls, ok := cols.classes.add(p)
			if !ok {
				c.v.missing = true
				return nil
			}
			c.last, c.lastClass = p, cls
		}
		cols.cls[i] = c.lastClass
	}
	c.n++
	return nil
}

// heldWalkCost is how many held logs a page scans (twice) in the time a walk along a
// column's index passes one entry, looking its row up: 10 µs or more against 2-5 ns at
// five million logs, and a row not in the page cache is read from the disk (a walk of a
// viewer's failed logs took 23 ms warm, 140 ms after a restart). heldInIndex is how many
// times faster the walk passes an entry whose test the index holds (the device,
// created), reading no row. A page whose walk would cost less is walked.
var heldWalkCost, heldInIndex = 10000.0, 50.0

// heldCreatedFrom is the offset from which a page ordered by created is found in the
// held columns (under a search, or a condition the hours do not count): nearer the
// start, the walks along created find it sooner. Tests lower it.
var heldCreatedFrom = hourWalkFrom

// heldSortMost bounds how many logs a page ordered by the duration sorts: those of the
// buckets its offset and end fall in.
const heldSortMost = 1 << 20

// heldColumn names the held column an ordering reads.
type heldColumn int

const (
	heldByDuration heldColumn = iota
	heldByName
	heldByOutcome
	heldByCreated // created, then the id: the id while logs are in created order
)

// heldOrdering is the held column of an ordering by the duration, the user name or the
// outcome, each then by created and the id (Model.Ordering), and its direction.
func heldOrdering(order []Order) (heldColumn, bool, bool) {
	if len(order) == 1 && order[0].SQL == "t.created" {
		return heldByCreated, order[0].Desc, true
	}
	if len(order) != 2 || order[1].SQL != "t.created" || order[1].Desc != order[0].Desc {
		return 0, false, false
	}
	switch order[0].SQL {
	case "t.execution_duration":
		return heldByDuration, order[0].Desc, true
	case "t.username":
		return heldByName, order[0].Desc, true
	case "t.success":
		return heldByOutcome, order[0].Desc, true
	}
	return 0, false, false
}

// heldFilter is a list's condition as the held columns test it: the logs between two
// ids, of some (device, outcome) pairs, user classes and commands (nil: any).
type heldFilter struct {
	lo, hi             int64
	ids                []int64 // a search's matches, ascending; nil: any
	pairs, users, cmds []bool
	// combos, for a condition on the device, outcome, user and name together, holds
	// the pairs of (device, outcome) key and user class it keeps, at key × classes + class.
	combos []bool
}

// notByClass and notByCommand are notByDevice for the user classes and commands.
var notByClass = sqlSet{m: map[string]bool{}}
var notByCommand = sqlSet{m: map[string]bool{}}

// heldPage is the page of q, a list of logs that keeps total, ordered by the duration,
// the user name or the outcome (or by created, under a search or deep in a list that
// the hours do not serve), found in the held columns: the logs that match are counted by
// the ordering's value (the duration's by buckets: durationBucket) and the page taken
// from the values its offset and end fall in, the logs of one value in id order, which
// is created order (logsInOrder); a duration's bucket is sorted. A search that matches
// at most pickMost logs in all is its matches, picked from the word and name indexes
// (heldDevices.pick) and sorted whole. searched is the list's conditions before
// planLogSearch read the search into others: taken when q.Where is not held.
//
// It reports false when the conditions read more than the held columns, when those
// are not held as the file is now, when the held count differs from total (a log
// deleted midway, which the held columns still have), and when walking the column's
// index would cost less (inIndex: the walk tests the conditions within it). The page's
// logs are read back under the conditions (but the search) and the ordering, and must
// come back as found.
func (db *DB) heldPage(ctx context.Context, q Query, searched []Expr, total int, inIndex bool) ([]int64, bool, error) {
	col, desc, ok := heldOrdering(q.Order)
	if !ok || db.batchTx(ctx) != nil || And(q.Where...).SQL == True.SQL || total <= 0 {
		return nil, false, nil
	}
	if cur := db.devices.cur.Load(); cur == nil || !cur.held() {
		return nil, false, nil
	}
	search := slices.ContainsFunc(searched, func(e Expr) bool { return e.logQ != "" })
	if col == heldByCreated && (q.Offset < heldCreatedFrom || inIndex && !search) {
		return nil, false, nil // the hours and walks along created serve it
	}
	all, err := db.allLogs(ctx)
	if err != nil {
		return nil, false, err
	}
	// Were the list's logs spread evenly along the column's index, walking it to the
	// page's end (pageAlong) would pass reach × all / total entries; the held columns
	// scan the logs between the filter's ids (all of them without bounds on created),
	// or test the search's matches.
	walk := float64(q.Offset+q.Limit) * float64(all) / float64(total) * heldWalkCost
	if inIndex {
		walk /= heldInIndex
	}
	if col != heldByCreated && !search && walk < float64(all) && !mentions(And(q.Where...).SQL, "t.created") {
		return nil, false, nil
	}
	if inOrder, err := db.logsInOrder(ctx); err != nil || !inOrder {
		return nil, false, err
	}
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()
	keys, oldest, err := db.devices.atOldest(ctx, tx, int64(alongMost))
	if err != nil || keys == nil || !keys.held() {
		return nil, false, err
	}
	where := q.Where
	f, ok, err := db.heldFilterOf(ctx, tx, keys, oldest, where)
	if err == nil && !ok && search {
		where = searched
		f, ok, err = db.heldFilterOf(ctx, tx, keys, oldest, where)
	}
	if err != nil || !ok {
		return nil, false, err
	}
	if scan := float64(f.hi - f.lo + 1); col != heldByCreated && f.ids == nil && walk < scan {
		return nil, false, nil
	}
	var ids []int64
	if f.ids != nil {
		ids, ok = keys.pageOfIDs(f, col, desc, q.Offset, q.Limit, total)
	} else {
		ids, ok = keys.page(f, col, desc, q.Offset, q.Limit, total)
	}
	if !ok {
		return nil, false, nil
	}
	// The page as the table has it: the same logs in the same order, or none of this.
	// Its logs are looked up by id, the outer loop, not found along the ordering's index.
	// The search's matches are where the page's logs came from.
	e := And(slices.DeleteFunc(slices.Clone(where), func(e Expr) bool { return e.logQ != "" || e.picked != nil })...)
	list, _ := json.Marshal(ids)
	back, err := scalars[int64](ctx, tx, `SELECT t.id FROM json_each(?) j CROSS JOIN command_logs t ON t.id = j.value WHERE `+
		e.SQL+` ORDER BY `+orderBy(keyTerms(q.Order)), append([]any{string(list)}, e.Args...)...)
	if err != nil {
		return nil, false, err
	}
	if !slices.Equal(back, ids) {
		db.devices.refused.Add(1)
		return nil, false, nil
	}
	db.devices.paged.Add(1)
	return ids, true, nil
}

// heldFilterOf is where as the held columns of keys test it, and false when it reads
// more: bounds on created (splitSpan), which are bounds on the id while logs are in
// created order, and conditions each on the device and outcome, the user and user name,
// or the command alone. The held logs before oldest, the oldest log's id, are those a
// prune deleted since they were read.
func (db *DB) heldFilterOf(ctx context.Context, tx *sql.Tx, keys *heldKeys, oldest int64, where []Expr) (heldFilter, bool, error) {
	f := heldFilter{lo: max(keys.base, oldest), hi: keys.upto}
	rest, s, spanned := splitSpan(where)
	if !spanned {
		if rest == nil && len(where) > 0 {
			return f, false, nil
		}
		rest = where
	} else {
		lo, hi, err := spanIDs(ctx, tx, s)
		if err != nil {
			return f, false, err
		}
		f.lo, f.hi = max(f.lo, lo), min(f.hi, hi)
	}
	for _, e := range rest {
		if e.picked != nil && f.ids == nil {
			f.ids = slices.Sorted(slices.Values(e.picked))
			continue
		}
		if e.logQ != "" && f.ids == nil {
			ids, ok, err := db.pickAll(ctx, tx, keys, e.logQ, -1)
			if err != nil || !ok {
				return f, false, err
			}
			f.ids = ids
			continue
		}
		if e.logQ != "" || e.fromOffset {
			return f, false, nil
		}
		if pairs, ok := db.logPairs(ctx, tx, e); ok {
			set := make([]bool, 2*(int(keys.maxKey)+1))
			for _, p := range pairs {
				if p.key >= 0 && p.key <= int64(keys.maxKey) {
					k := p.key << 1
					if !p.ok {
						k |= 1
					}
					set[k] = true
				}
			}
			f.pairs = both(f.pairs, set)
			continue
		}
		if set, ok := classesOf(ctx, tx, keys.classes, e); ok {
			f.users = both(f.users, set)
			continue
		}
		if set, ok := combosOf(ctx, tx, keys, e); ok {
			f.combos = both(f.combos, set)
			continue
		}
		if set, ok := db.commandsOf(ctx, tx, e); ok {
			f.cmds = both(f.cmds, set)
			continue
		}
		return f, false, nil
	}
	return f, true, nil
}

// pickAll is the ids, ascending, of the logs keys holds that match q, when they are at
// most pickMost (every is their number when the caller learnt it, -1 when not); false
// when more. They are kept for the next pages of the same search (heldPicks) while tx's
// snapshot holds the same logs, and only the logs written since are searched when it
// holds more.
func (db *DB) pickAll(ctx context.Context, tx *sql.Tx, keys *heldKeys, q string, every int) ([]int64, bool, error) {
	epochs, err := readLogEpochs(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	devices := make([]int64, keys.maxKey+1)
	for i := range devices {
		devices[i] = int64(i)
	}
	if ids, upto, ok := db.picks.get(q, epochs); ok {
		if upto == epochs.newest {
			return ids, true, nil
		}
		// Only logs above upto were written since: their matches are added to those
		// kept, rather than every match picked again after each execution.
		sets, args := logSearchSets(q, "", upto)
		more, ok, err := db.devices.pick(ctx, tx, keys, strings.Join(sets, " UNION ALL "), args, devices)
		if err != nil {
			return nil, false, err
		}
		if ok && len(ids)+len(more) <= pickMost {
			slices.Sort(more)
			ids = append(slices.Clip(ids), more...)
			db.picks.put(q, epochs, ids)
			db.picks.added.Add(1)
			return ids, true, nil
		}
	}
	ids, ok, err := db.pickIn(ctx, tx, keys, q, every, devices, epochs.newest)
	if err != nil || !ok {
		return nil, false, err
	}
	slices.Sort(ids)
	db.picks.put(q, epochs, ids)
	return ids, true, nil
}

// heldPicks keeps the matches pickAll read of a few searches, each under the epochs of
// the snapshot it read them in: a log deleted or changed moves the search epoch, one
// inserted below the newest the moves epoch, any other the newest id (readLogEpochs).
// Equal epochs, the same logs, the same matches; equal but for a newer newest id, the
// same matches up to the kept newest, and only the logs above it to search.
type heldPicks struct {
	mu sync.Mutex
	m  map[heldPick][]int64
	// added counts the picks made by adding the matches of the logs written since to
	// those kept (for tests).
	added atomic.Int64
}

type heldPick struct {
	q      string
	epochs logEpochs
}

// before reports whether k is q's matches under e's search and moves epochs and an
// older newest id: the same logs as e's up to that id, and only logs above it since.
func (k heldPick) before(q string, e logEpochs) bool {
	return k.q == q && k.epochs.search == e.search && k.epochs.moves == e.moves && k.epochs.newest < e.newest
}

// heldPicksMost bounds the searches kept; past it, the kept ones go.
const heldPicksMost = 16

// get is q's matches kept under epochs e, or under e's search and moves epochs and the
// newest newest id below e's; upto is that newest id.
func (p *heldPicks) get(q string, e logEpochs) (ids []int64, upto int64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ids, ok := p.m[heldPick{q, e}]; ok {
		return ids, e.newest, true
	}
	for k, v := range p.m {
		if k.before(q, e) && (!ok || k.epochs.newest > upto) {
			ids, upto, ok = v, k.epochs.newest, true
		}
	}
	return ids, upto, ok
}

// put keeps q's matches under e, in place of those of q that e's newer ones replace.
func (p *heldPicks) put(q string, e logEpochs, ids []int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.m {
		if k.before(q, e) {
			delete(p.m, k)
		}
	}
	if p.m == nil || len(p.m) >= heldPicksMost {
		p.m = map[heldPick][]int64{}
	}
	p.m[heldPick{q, e}] = ids
}

// both is the intersection of two sets (nil: every member).
func both(a, b []bool) []bool {
	if a == nil {
		return b
	}
	for i := range a {
		a[i] = a[i] && i < len(b) && b[i]
	}
	return a
}

// spanIDs are the first and last ids of the logs within s, while logs are in created
// order: every log between them is within s.
func spanIDs(ctx context.Context, tx *sql.Tx, s span) (int64, int64, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if s.from != "" {
		op := ">="
		if s.fromOpen {
			op = ">"
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT id FROM command_logs INDEXED BY command_logs_created WHERE created `+op+
			` ? ORDER BY created, id LIMIT 1), 9223372036854775807)`, s.from).Scan(&lo); err != nil {
			return 0, 0, err
		}
	}
	if s.to != "" {
		op := "<="
		if s.toOpen {
			op = "<"
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT id FROM command_logs INDEXED BY command_logs_created WHERE created `+op+
			` ? ORDER BY created DESC, id DESC LIMIT 1), -9223372036854775808)`, s.to).Scan(&hi); err != nil {
			return 0, 0, err
		}
	}
	return lo, hi, nil
}

// classesOf is the set of user classes whose logs all match e, a condition on the log's
// user and user name alone; false if e reads more.
func classesOf(ctx context.Context, tx *sql.Tx, classes *userClasses, e Expr) ([]bool, bool) {
	if notByClass.has(e.SQL) {
		return nil, false
	}
	var list string
	err := tx.QueryRowContext(ctx, `SELECT coalesce(json_group_array(j.key), '[]') FROM json_each(?) j
		WHERE EXISTS (SELECT 1 FROM (SELECT nullif(j.value ->> 0, 0) AS user_id, j.value ->> 1 AS username) t WHERE `+e.SQL+`)`,
		append([]any{classes.doc}, e.Args...)...).Scan(&list)
	in, ok := decodeSet[[]int](ctx, &notByClass, e.SQL, list, err)
	if !ok {
		return nil, false
	}
	set := make([]bool, len(classes.list))
	for _, c := range in {
		set[c] = true
	}
	return set, true
}

// heldCombosMost bounds the pairs of (device, outcome) key and user class a condition
// on them together is tested by.
const heldCombosMost = 1 << 24

// combosOf is the set of pairs of (device, outcome) key and user class (heldFilter.combos)
// whose logs all match e, a condition on the log's device, outcome, user and user name
// ({"user": 3, "success": false}), tested against those the per-user counters hold
// (migration 0067); false if e reads more, or the pairs are more than heldCombosMost.
func combosOf(ctx context.Context, tx *sql.Tx, keys *heldKeys, e Expr) ([]bool, bool) {
	classes := len(keys.classes.list)
	if notByUser.has(e.SQL) || 2*(int(keys.maxKey)+1)*classes > heldCombosMost {
		return nil, false
	}
	var list string
	err := tx.QueryRowContext(ctx, `SELECT coalesce(json_group_array(json_array(t.device_key, t.user_key, t.username, t.success)), '[]')
		FROM command_log_user_counts t WHERE t.total > 0 AND `+e.SQL, e.Args...).Scan(&list)
	in, ok := decodeSet[[][4]any](ctx, &notByUser, e.SQL, list, err)
	if !ok {
		return nil, false
	}
	set := make([]bool, 2*(int(keys.maxKey)+1)*classes)
	for _, c := range in {
		device, _ := c[0].(float64)
		user, _ := c[1].(float64)
		name, _ := c[2].(string)
		ok, _ := c[3].(float64)
		cls, held := keys.classes.index[userClass{int64(user), name}]
		if !held || device < 0 || device > float64(keys.maxKey) {
			return nil, false // not as held: the page is read from the table
		}
		key := int(device) << 1
		if ok == 0 {
			key |= 1
		}
		set[key*classes+int(cls)] = true
	}
	return set, true
}

// commandsOf is the set of command keys (0 for a log without a command) whose logs all
// match e, a condition on the log's command alone, as deviceKeys is for the device; kept
// in the check cache as the device keys are. False if e reads more.
func (db *DB) commandsOf(ctx context.Context, tx *sql.Tx, e Expr) ([]bool, bool) {
	if notByCommand.has(e.SQL) {
		return nil, false
	}
	list, err := db.cachedSet(ctx, tx, "commandkeys", `SELECT coalesce(json_group_array(k.command_id), '[]')
		FROM (SELECT id AS command_id FROM commands UNION ALL SELECT 0) k
		WHERE EXISTS (SELECT 1 FROM (SELECT nullif(k.command_id, 0) AS command_id) t WHERE `+e.SQL+`)`, e)
	in, ok := decodeSet[[]int64](ctx, &notByCommand, e.SQL, list, err)
	if !ok {
		return nil, false
	}
	set := []bool{}
	for _, c := range in {
		if c >= 0 && c < heldColsCap {
			if int(c) >= len(set) {
				set = append(set, make([]bool, int(c)+1-len(set))...)
			}
			set[c] = true
		}
	}
	return set, true
}

// pageOfIDs is page for a filter with a search's matches (f.ids): those that match the
// rest of f, sorted whole.
func (k *heldKeys) pageOfIDs(f heldFilter, col heldColumn, desc bool, offset, limit, total int) ([]int64, bool) {
	pairs, more := f.pairs, f.users != nil || f.cmds != nil || f.combos != nil
	var es []heldEntry
	for _, id := range f.ids {
		if id < f.lo || id > f.hi || id < k.base || id > k.upto {
			continue
		}
		i := id - k.base
		if key := k.keys[i]; key < 0 || pairs != nil && (int(key) >= len(pairs) || !pairs[key]) || more && !k.more(&f, i) {
			continue
		}
		v := float64(k.bucket(col, i))
		if col == heldByDuration {
			v = k.dur[i]
		}
		es = append(es, heldEntry{v, id})
	}
	if len(es) != total {
		return nil, false
	}
	return sortedPage(es, desc, min(offset, len(es)), min(offset+limit, len(es))), true
}

// heldEntry is a log's id and its value of the ordering.
type heldEntry struct {
	v  float64
	id int64
}

// sortedPage is the ids of es[from:to] once es is sorted by value, then id (descending
// when desc). Only es[:to] is sorted when it is a small part of es: the first page of a
// search's 37,000 matches by duration took 11 ms to sort them all.
func sortedPage(es []heldEntry, desc bool, from, to int) []int64 {
	order := entryOrder(desc)
	if to < len(es)/4 {
		selectFirst(es, to, order)
		es = es[:to]
	}
	slices.SortFunc(es, order)
	ids := make([]int64, 0, to-from)
	for _, e := range es[from:to] {
		ids = append(ids, e.id)
	}
	return ids
}

// entryOrder orders held entries by value, then id, descending when desc.
func entryOrder(desc bool) func(a, b heldEntry) int {
	return func(a, b heldEntry) int {
		c := cmp.Or(cmp.Compare(a.v, b.v), cmp.Compare(a.id, b.id))
		if desc {
			return -c
		}
		return c
	}
}

// selectFirst moves the k first entries of es by order to es[:k], in no order
// (quickselect). order must not find two entries equal (heldEntry's ids differ).
func selectFirst(es []heldEntry, k int, order func(a, b heldEntry) int) {
	lo, hi := 0, len(es)-1
	for lo < hi && k > lo && k <= hi {
		// The median of the first, middle and last entries as the pivot, kept at hi.
		mid := lo + (hi-lo)/2
		if order(es[mid], es[lo]) < 0 {
			es[mid], es[lo] = es[lo], es[mid]
		}
		if order(es[hi], es[lo]) < 0 {
			es[hi], es[lo] = es[lo], es[hi]
		}
		if order(es[mid], es[hi]) < 0 {
			es[mid], es[hi] = es[hi], es[mid]
		}
		p := lo
		for i := lo; i < hi; i++ {
			if order(es[i], es[hi]) < 0 {
				es[i], es[p] = es[p], es[i]
				p++
			}
		}
		es[p], es[hi] = es[hi], es[p]
		// es[lo:p] come before es[p], es[p+1:hi+1] after it.
		if k <= p {
			hi = p - 1
		} else {
			lo = p + 1
		}
	}
}

// heldPartMin is the fewest logs a part of a scan of the held columns holds: a scan of
// more is split among the processors (five million logs take 13 ms on one). Tests
// lower it.
var heldPartMin int64 = 1 << 20

// heldParts splits the offsets lo..hi into one part per processor, each of
// heldPartMin offsets or more.
func heldParts(lo, hi int64) [][2]int64 {
	n := min(int64(runtime.GOMAXPROCS(0)), max(1, (hi-lo+1)/heldPartMin))
	parts := make([][2]int64, 0, n)
	for p := range n {
		a := lo + (hi-lo+1)*p/n
		b := lo + (hi-lo+1)*(p+1)/n - 1
		parts = append(parts, [2]int64{a, b})
	}
	return parts
}

// inParts runs scan on each part, side by side, and waits for them.
func inParts(parts [][2]int64, scan func(p int, lo, hi int64)) {
	if len(parts) == 1 {
		scan(0, parts[0][0], parts[0][1])
		return
	}
	var wg sync.WaitGroup
	for p, r := range parts {
		wg.Go(func() { scan(p, r[0], r[1]) })
	}
	wg.Wait()
}

// bucket is the ordering's value of the log at offset i, or its duration's bucket:
// the top 16 bits of its float32 value, made to sort as the values do.
func (k *heldKeys) bucket(col heldColumn, i int64) uint32 {
	switch col {
	case heldByOutcome:
		return uint32(^k.keys[i] & 1) // 0 failed, 1 successful
	case heldByName:
		return uint32(k.classes.rank[k.cls[i]])
	case heldByCreated:
		return 0
	}
	return uint32(k.durb[i])
}

// durationBucket is the top 16 bits of d's float32 value, made to sort as the values
// do: a bucket of durations within 1/128 of each other.
func durationBucket(d float64) uint16 {
	if d == 0 {
		d = 0 // -0 sorts with 0, as SQLite compares them
	}
	b := math.Float32bits(float32(d))
	if b&(1<<31) != 0 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return uint16(b >> 16)
}

// more reports whether the log at offset i has a user class and command f keeps; its
// pair is tested in each loop, inline.
func (k *heldKeys) more(f *heldFilter, i int64) bool {
	if f.users != nil && (int(k.cls[i]) >= len(f.users) || !f.users[k.cls[i]]) {
		return false
	}
	if f.combos != nil && !f.combos[int(k.keys[i])*len(k.classes.list)+int(k.cls[i])] {
		return false
	}
	return f.cmds == nil || int(k.cmd[i]) < len(f.cmds) && f.cmds[k.cmd[i]]
}

// cmdOut reports whether the log at offset i is of a command that cmds (nil: any)
// does not keep.
func cmdOut(cmd []int32, cmds []bool, i int64) bool {
	return cmds != nil && (int(cmd[i]) >= len(cmds) || !cmds[cmd[i]])
}

// page finds the page of the logs matching f, ordered by col (descending when desc),
// then by id, from offset, limit long; false when they are not total.
func (k *heldKeys) page(f heldFilter, col heldColumn, desc bool, offset, limit, total int) ([]int64, bool) {
	lo, hi := max(f.lo, k.base)-k.base, min(f.hi, k.upto)-k.base
	keys, pairs, more := k.keys, f.pairs, f.users != nil || f.cmds != nil || f.combos != nil
	// A command filter is tested first: it keeps a few logs of many (one command's of
	// five million), and the other tests then run on those few.
	cmd, cmds := k.cmd, f.cmds
	if pairs == nil {
		pairs = make([]bool, 2*(int(k.maxKey)+1))
		for i := range pairs {
			pairs[i] = true
		}
	}
	// Each loop tests a log's pair inline, then the rest (more): key < 0 is no log.
	var size int
	switch col {
	case heldByOutcome:
		size = 2
	case heldByName:
		size = len(k.classes.list)
	case heldByCreated:
		size = 1
	default:
		size = 1 << 16
	}
	// The counts by value, in parts of the range side by side (heldParts).
	parts := heldParts(lo, hi)
	hists := make([][]int, len(parts))
	inParts(parts, func(p int, lo, hi int64) {
		hist := make([]int, size)
		if col == heldByDuration {
			durb := k.durb
			for i := lo; i <= hi; i++ {
				if key := keys[i]; !cmdOut(cmd, cmds, i) && key >= 0 && pairs[key] && (!more || k.more(&f, i)) {
					hist[durb[i]]++
				}
			}
		} else {
			for i := lo; i <= hi; i++ {
				if key := keys[i]; !cmdOut(cmd, cmds, i) && key >= 0 && pairs[key] && (!more || k.more(&f, i)) {
					hist[k.bucket(col, i)]++
				}
			}
		}
		hists[p] = hist
	})
	hist, n := hists[0], 0
	for _, h := range hists[1:] {
		for b, c := range h {
			hist[b] += c
		}
	}
	for _, c := range hist {
		n += c
	}
	if n != total {
		return nil, false
	}
	end := min(offset+limit, n)
	if offset >= end {
		return nil, true
	}
	// The buckets, in the ordering's direction, from the one the offset falls in to the
	// one the page's last log does; need[b] is how many of b's logs the page reaches.
	need := make([]int, size)
	var buckets []int
	skip, cum, sorted := 0, 0, 0
	for j := 0; j < size && cum < end; j++ {
		b := j
		if desc {
			b = size - 1 - j
		}
		if cum+hist[b] <= offset {
			cum += hist[b]
			continue
		}
		if len(buckets) == 0 {
			skip = offset - cum
		}
		buckets = append(buckets, b)
		need[b] = min(hist[b], end-cum)
		sorted += hist[b]
		cum += hist[b]
	}
	bmin, bmax := uint32(min(buckets[0], buckets[len(buckets)-1])), uint32(max(buckets[0], buckets[len(buckets)-1]))
	if col == heldByDuration {
		if sorted > heldSortMost {
			return nil, false
		}
		// Every log of those buckets, sorted by duration, then id.
		found := make([][]heldEntry, len(parts))
		inParts(parts, func(p int, lo, hi int64) {
			durb := k.durb
			for i := lo; i <= hi; i++ {
				if b := uint32(durb[i]); b >= bmin && b <= bmax && !cmdOut(cmd, cmds, i) && keys[i] >= 0 && pairs[keys[i]] && (!more || k.more(&f, i)) {
					found[p] = append(found[p], heldEntry{k.dur[i], i + k.base})
				}
			}
		})
		return sortedPage(slices.Concat(found...), desc, skip, skip+end-offset), true
	}
	// Each value's logs in id order, in the ordering's direction: the first need of
	// each, those of the first value from skip on.
	seen, from := make([]int, size), make([]int, size)
	got := make([][]int64, size)
	from[buckets[0]] = skip
	left := 0
	for _, b := range buckets {
		left += need[b]
	}
	step, i, stop := int64(1), lo, hi+1
	if desc {
		step, i, stop = -1, hi, lo-1
	}
	for ; i != stop && left > 0; i += step {
		if key := keys[i]; cmdOut(cmd, cmds, i) || key < 0 || !pairs[key] || more && !k.more(&f, i) {
			continue
		}
		if b := k.bucket(col, i); b >= bmin && b <= bmax && seen[b] < need[b] {
			if seen[b] >= from[b] {
				got[b] = append(got[b], i+k.base)
			}
			seen[b]++
			left--
		}
	}
	var ids []int64
	for _, b := range buckets {
		ids = append(ids, got[b]...)
	}
	return ids, true
}
