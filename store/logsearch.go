package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Keys of command_log_search_counts besides the devices' counter keys: the count over
// every log, and the mark that the per-device counts were taken (holding their sum). A
// device's failed matches are kept under failedKey of its key (migration 0069).
const (
	searchCountAll     = -1
	searchCountDevices = -2
	searchCountFailed  = -16
)

// failedKey is the key of the failed matches of the device of counter key key.
func failedKey(key int64) int64 { return searchCountFailed - key }

// matchKey says whether a kept count's key counts matches (a device's, or every log's),
// not the failed ones among them.
func matchKey(key int64) bool { return key > searchCountFailed }

// perDeviceKeys selects the rows of the per-device counts of command_log_search_counts:
// a device's matches and its failed ones.
var perDeviceKeys = "(device_id >= 0 OR device_id <= " + strconv.Itoa(searchCountFailed) + ")"

// searchTuning are the thresholds of a log search.
type searchTuning struct {
	// keep is the fewest new matches whose count is kept: a count that reads fewer ids
	// than this is cheap enough to take again.
	keep int64
	// rowCheck is about how many matches SQLite reads out of the indexes in the time it
	// tests one log against the word index (a MATCH bound to the log's rowid, set up
	// anew for each log); rowRead, in the time it reads one log by its id; rowIn, in
	// the time it looks one id up in a set read once.
	rowCheck, rowRead, rowIn int64
	// way, when not searchByCost, is the way every page is read (tests).
	way searchWay
	// WarmSearchCounts keeps ahead the counts of the words of the newest warmSample
	// logs that would match warmFrom logs or more, at most warmWords of them.
	warmFrom              int64
	warmSample, warmWords int
	// keysInline is the most logs after the held devices (heldDevices) a count reads for
	// their devices before using them; past it, or at -1, it counts without them.
	keysInline int64
	// windowSpread is how many times as many ids as logs a walk's window may span
	// (walkWindow).
	windowSpread int64
	// windowLogs, when set, is the number of logs every window spans (tests).
	windowLogs int64
	// namedRows, when set, is the most logs namedNewest reads, whatever it is expected
	// to (tests).
	namedRows int64
	// pruneKeep is how many logs a prune deletes keeping the search counts over them
	// (less their matches); past it, those counts go. pruneKeepBatch is how many it
	// deletes a transaction meanwhile: each kept search reads every log of the batch
	// while the writer is held.
	pruneKeep      int64
	pruneKeepBatch int
	// halvesMin is the fewest log ids a count from the word index spans for it to be
	// taken in halves at once (countHalves).
	halvesMin int64
}

// searchWay is how a page of a log search is read (see planLogSearch).
type searchWay int

const (
	searchByCost searchWay = iota
	searchByRow
	searchBySet
	searchFromSet
	searchByNamed
	searchByTail
)

var defaultSearchTuning = searchTuning{keep: 1000, rowCheck: 400, rowRead: 12, rowIn: 4,
	warmFrom: 200_000, warmSample: 1000, warmWords: 16, keysInline: 100_000,
	windowSpread: 4, pruneKeep: 50_000, pruneKeepBatch: 1000, halvesMin: 200_000}

// everyLogProbe is how many of the newest logs are tested against a search before its
// matches are counted to learn whether it matches every log.
const everyLogProbe = 16

// searchCountQueries bounds how many searches' counts are kept; the least recently
// taken go first. The words WarmSearchCounts keeps (warmWords) take some of them, and
// leave people's own searches most.
const searchCountQueries = 96

// planLogSearch finds a log search among q's conditions and, when the others depend
// on the log's device alone (or there are none), counts it exactly (countLogSearch)
// and chooses how the page is read: it returns the conditions of the page, the count,
// and true; or q's conditions as they were and false, to be counted plainly.
//
// A page ordered by created takes the cheapest of three ways. With matches dense
// among the logs a viewer may see, the created index is walked from the page's end and
// each log is tested against the search (logSearchRow): it reaches the page after
// about (offset + limit) × visible / matches logs. Sparser, for every log, each name's
// set is cut to its first offset + limit logs (logSearchTop) and the created index is
// walked against the whole set, or the set read in order when that is shorter. Else
// the page comes from the set of matching ids, narrowed to the devices.
func (db *DB) planLogSearch(ctx context.Context, q Query) ([]Expr, int, bool, error) {
	i := slices.IndexFunc(q.Where, func(e Expr) bool { return e.logQ != "" })
	if i < 0 {
		return q.Where, 0, false, nil
	}
	search, rest := q.Where[i].logQ, slices.Delete(slices.Clone(q.Where), i, i+1)
	devices := ""
	if r := And(rest...); r.SQL != True.SQL {
		set, ok := db.logDevices(ctx, db.reader(ctx), r)
		if !ok {
			return db.planPairsSearch(ctx, q, search, rest, r)
		}
		devices = set
	}
	total, everyTotal, err := db.countLogSearch(ctx, search, searchScope{devices: devices})
	if err != nil || total == 0 {
		return q.Where, total, err == nil, err
	}
	visible, err := logCount(ctx, db.reader(ctx), devices)
	if err != nil {
		return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
	}
	if total == visible {
		// Every log of the list matches: the page is the list's own, in any order, whose
		// deep offsets the hourly counters find and whose column sorts walk their index,
		// without testing a log against the search.
		if again, err := logCount(ctx, db.reader(ctx), devices); err == nil && again == visible {
			return rest, total, true, nil
		}
	}
	if desc, ok := byCreated(q.Order); ok {
		reach := q.Limit + 1
		if q.After == nil {
			reach += q.Offset
		}
		all := int64(visible)
		if devices != "" {
			n, err := db.allLogs(ctx)
			if err != nil {
				return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
			}
			all = int64(n)
		}
		// In matches read out of the indexes: the logs walked along created to reach
		// the page (each read for its device when there are devices to keep), and those
		// of them tested against the search; or the set of matches.
		matches := int64(total) * int64(total)
		named, err := searchNamed(ctx, db.reader(ctx), search)
		if err != nil {
			return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
		}
		// The count over every log, and what reading every log's matches costs: each
		// taken once, whichever way asks for it.
		every := sync.OnceValues(func() (int, error) {
			if everyTotal >= 0 {
				return everyTotal, nil
			}
			n, _, err := db.countLogSearch(ctx, search, searchScope{})
			return n, err
		})
		wordsCost := sync.OnceValues(func() (int64, error) { return db.wordsCost(ctx, search, every) })
		if q.After == nil && !named && (db.search.way == searchByCost || db.search.way == searchByTail) {
			page, ok, err := db.tailPage(ctx, search, rest, int64(reach), q.Offset, int64(total), every, desc)
			if err != nil {
				return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
			}
			if ok {
				return []Expr{page}, total, true, nil
			}
		}
		if devices != "" && db.search.way == searchByCost && !named {
			// When no name matches, the sets of a confined viewer's matches come from
			// the word index's matches over every log, each read (or tested for its
			// device): they cost every log's matches, not the viewer's.
			cost, err := wordsCost()
			if err != nil {
				return nil, 0, false, err
			}
			matches = int64(total) * cost
		}
		way := db.search.way
		// A walk whose logs' ids lie close together tests them against the word index's
		// matches in their range, read once (walkWindow): a cost of rowIn a log it tests
		// and the range's matches, about twice those of the logs it passes. When no name
		// matches, the walk reads the created index alone (it holds the id and the
		// device); else each log it tests is read for its names.
		window := noWindow
		read := int64(0)
		if named {
			read = db.search.rowRead
		}
		walk := int64(reach) * all / int64(total)
		if _, words := logWords(search); words && 2*walk <= walkWindowMost && (way == searchByCost || way == searchByRow) {
			// Against the set ways, which read every log's matches (for a viewer of every
			// log, whichever way they then take the page).
			cost, err := wordsCost()
			if err != nil {
				return nil, 0, false, err
			}
			other := matches
			if devices == "" {
				other = int64(total) * cost
			}
			if way == searchByRow || int64(reach)*(all+int64(visible)*(db.search.rowIn+read)+2*cost) < other {
				if window, err = db.walkWindow(ctx, q, desc, walk); err != nil {
					return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
				}
				if window != noWindow {
					way = searchByRow
				}
			}
		}
		if way == searchByCost && int64(reach)*(int64(visible)*db.search.rowCheck+all*db.search.rowRead) < matches {
			way = searchByRow
		}
		if way == searchByCost && devices == "" {
			way = searchFromSet
			if int64(reach)*all < matches {
				way = searchBySet
			}
		}
		if devices != "" && named && (way == searchByCost || way == searchByNamed) {
			page, ok, err := db.namedPage(ctx, q, search, devices, desc, int64(reach), total, all, every)
			if err != nil {
				return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
			}
			if ok {
				return append(rest, page), total, true, nil
			}
		}
		if way == searchByNamed || way == searchByTail {
			way = searchByCost
		}
		if way == searchByRow {
			if devices != "" {
				// The unary + keeps SQLite from reading the devices' logs by device and
				// sorting them, rather than walking created.
				r := And(rest...)
				rest = []Expr{{SQL: "+(" + r.SQL + ")", Args: r.Args}}
			}
			return append(rest, logSearchRow(search, window, named)), total, true, nil
		}
		if devices != "" && way == searchByCost {
			// Against the set of every log's matches, read from the indexes alone, the
			// walk tests each log it passes cheaply and reads only the matches for their
			// device; reading the devices' matches reads every match for its device.
			n, err := every()
			if err != nil {
				return nil, 0, false, err
			}
			if int64(reach)*all < 5*int64(total)*int64(n) {
				way = searchBySet
			}
		}
		if devices != "" && way == searchBySet {
			r := And(rest...)
			every := logSearch(search)
			return []Expr{{SQL: "+(" + r.SQL + ")", Args: r.Args}, {SQL: "+" + every.SQL, Args: every.Args}}, total, true, nil
		}
		if devices == "" && q.After == nil {
			dir := orderDir(desc)
			top := logSearchTop(search, dir, reach)
			if way != searchFromSet {
				// The unary + keeps SQLite from starting from the matches.
				top.SQL = "+" + top.SQL
			}
			return append(rest, top), total, true, nil
		}
	}
	if devices == "" {
		return q.Where, total, true, nil
	}
	ids, ok, err := db.pickSearch(ctx, search, devices, everyTotal)
	if err != nil {
		return nil, 0, false, fmt.Errorf("store: list command_logs: %w", err)
	}
	if ok {
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, 0, false, err
		}
		// The unary + keeps SQLite from walking the devices' logs against the ids.
		r := And(rest...)
		return []Expr{{SQL: "+(" + r.SQL + ")", Args: r.Args}, {SQL: `t.id IN (SELECT value FROM json_each(?))`, Args: []any{string(list)}, picked: ids}}, total, true, nil
	}
	sets, args := logSearchSets(search, devices, 0)
	return append(rest, Expr{SQL: `t.id IN (` + strings.Join(sets, " UNION ALL ") + `)`, Args: args}), total, true, nil
}

// pickMost is the most matches over every log pickSearch reads.
const pickMost = 100_000

// pickSearch is the ids of the logs of devices (a JSON array of counter keys) that match
// q, picked from every log's matches by the devices held (heldDevices), which reads the
// indexes alone; a viewer's own sets read each match's row for its device: 37,500 rows
// for a phrase at five million logs, most of a column-sorted page's 250 ms. False when
// the devices are not held, or q matches more than pickMost logs in all. every is that
// count when the caller learnt it (-1 when not).
func (db *DB) pickSearch(ctx context.Context, q, devices string, every int) ([]int64, bool, error) {
	if db.devices.cur.Load() == nil {
		return nil, false, nil
	}
	var keys []int64
	if err := json.Unmarshal([]byte(devices), &keys); err != nil {
		return nil, false, fmt.Errorf("devices %s: %w", devices, err)
	}
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()
	held, err := db.devices.at(ctx, tx, db.search.keysInline)
	if err != nil || held == nil {
		return nil, false, err
	}
	// Every log's matches, kept across writes (pickAll), then the devices' own by the
	// keys held: picking a viewer's 7,500 of a phrase's 37,500 matches at five million
	// logs read all of them from the word index again for every page, 25-40 ms.
	all, ok, err := db.pickAll(ctx, tx, held, q, every)
	if err != nil || !ok {
		return nil, false, err
	}
	visible := held.keySet(keys)
	ids := make([]int64, 0, len(all)/4)
	for _, id := range all {
		if id < held.base || id > held.upto {
			return nil, false, nil // never seen: matches picked under other keys
		}
		if k := held.keys[id-held.base]; k >= 0 && visible[k>>1] {
			ids = append(ids, id)
		}
	}
	return ids, true, nil
}

// pickIn is the ids of the logs of the device keys that match q, picked in tx from
// every log's matches by the devices held; false when q matches more than pickMost logs
// in all (every, when the caller learnt it; -1 when not). newest is tx's newest log.
// When only the word index holds q, the matches are picked in halves of the ids on two
// cores (pickHalves): a phrase's 37,000 matches at five million logs took 33 ms.
func (db *DB) pickIn(ctx context.Context, tx *sql.Tx, held *heldKeys, q string, every int, keys []int64, newest int64) ([]int64, bool, error) {
	if every < 0 {
		var err error
		if every, _, err = db.countLogSearch(ctx, q, searchScope{}); err != nil {
			return nil, false, err
		}
	}
	if every > pickMost {
		return nil, false, nil
	}
	words, only, err := wordsOnly(ctx, tx, q)
	if err != nil {
		return nil, false, err
	}
	if only {
		return db.pickHalves(ctx, tx, 0, newest, func(ctx context.Context, rq rowQueryer, lo, hi int64) ([]int64, bool, error) {
			ids, args := wordsIn(words, lo, hi)
			return db.devices.pick(ctx, rq, held, ids, args, keys)
		})
	}
	sets, args := logSearchSets(q, "", 0)
	return db.devices.pick(ctx, tx, held, strings.Join(sets, " UNION ALL "), args, keys)
}

// planPairsSearch is planLogSearch for a search whose other conditions (where) depend on
// the log's device and outcome: a viewer's failed logs, a device's successful ones. The
// search is counted over the (device, outcome) pairs where keeps (logPairs), from the
// kept counts. When every log of the list matches, the page is the list's own without
// the search; else it is read with every condition as it was. False, to be counted
// plainly, when where depends on more.
func (db *DB) planPairsSearch(ctx context.Context, q Query, search string, rest []Expr, where Expr) ([]Expr, int, bool, error) {
	pairs, ok := db.logPairs(ctx, db.reader(ctx), where)
	if !ok {
		return q.Where, 0, false, nil
	}
	// The list's own count, from the per-user counters, before and after the search's:
	// a write between them that changes the list shows in one or the other.
	own, byUser := db.countByUser(ctx, db.reader(ctx), where)
	total, _, err := db.countLogSearch(ctx, search, searchScope{pairs: pairs, where: where})
	if err != nil || total == 0 {
		return q.Where, total, err == nil, err
	}
	if byUser && own == total {
		if again, ok := db.countByUser(ctx, db.reader(ctx), where); ok && again == own {
			db.pairsDropped.Add(1)
			return rest, total, true, nil
		}
	}
	return q.Where, total, true, nil
}

// tailReadMost bounds the word index's matches tailPage reads for a page, each read with
// its log; tailAloneMost, those it reads from the word index alone, for a list of every
// log.
const (
	tailReadMost  = 10_000
	tailAloneMost = 20_000
)

// tailPage is the newest reach logs that match search (by their words; no name holds
// it) among those rest allows, when they are all in the logs written in created order
// (command_log_order, migration 0065): there, newest first is highest id first, so they
// are the word index's matches read from the highest id down, each tested against rest,
// without walking created. total is the count of the logs that match among those rest
// allows and every the count over every log: about reach × every / total matches are
// read. False when that is more than tailReadMost / 2, or when the logs in order hold
// fewer than reach of them: the page reaches older logs. With no rest (a list of every
// log), every match is kept and none is read with its log: up to tailAloneMost of them
// are read from the word index alone.
//
// Oldest first (desc false), it is the oldest reach such logs, read from the lowest id
// up, when every log is in created order (the order's tail at or below the lowest id,
// read in the same statement): else logs below the tail could come first, and no match
// is read. A phrase's first page 10,000 in, oldest first, picked all its 37,500 matches
// to find 10,050 of them: 37–56 ms.
//
// The condition holds the logs from offset on (fromOffset): in created order, the
// page's own. Handing the page all reach of them to sort by created would read each
// one's row: at 5,000,000 logs, 10,000 rows cost 90-140 ms.
func (db *DB) tailPage(ctx context.Context, search string, rest []Expr, reach int64, offset int, total int64, every func() (int, error), desc bool) (Expr, bool, error) {
	words, ok := logWords(search)
	if !ok || total < reach {
		return Expr{}, false, nil
	}
	n, err := every()
	if err != nil {
		return Expr{}, false, err
	}
	keep := And(rest...)
	expect := reach * int64(n) / total
	query, read := `SELECT t.id, CASE WHEN (`+keep.SQL+`) THEN 1 ELSE 0 END FROM command_logs_text m JOIN command_logs t ON t.id = m.rowid`,
		min(4*expect+100, tailReadMost)
	if keep.SQL == True.SQL {
		// Exactly reach matches to read.
		if reach > tailAloneMost {
			return Expr{}, false, nil
		}
		query, read = `SELECT m.rowid, 1 FROM command_logs_text m`, reach
	} else if 2*expect > tailReadMost {
		return Expr{}, false, nil
	}
	// One statement: the tail and the matches are read in one snapshot.
	args := append(slices.Clip(keep.Args), words.Args...)
	inOrder, dir := `m.rowid >= (SELECT tail FROM command_log_order WHERE id = 1)`, "DESC"
	if !desc {
		inOrder, dir = inOrderSQL, "ASC"
	}
	rows, err := db.reader(ctx).QueryContext(ctx, query+`
		WHERE m.command_logs_text MATCH ? AND `+inOrder+`
		ORDER BY m.rowid `+dir+` LIMIT ?`, append(args, read)...)
	if err != nil {
		return Expr{}, false, err
	}
	defer rows.Close()
	ids := make([]int64, 0, reach)
	for int64(len(ids)) < reach && rows.Next() {
		var id int64
		var kept bool
		if err := rows.Scan(&id, &kept); err != nil {
			return Expr{}, false, err
		}
		if kept {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil || int64(len(ids)) < reach {
		return Expr{}, false, err
	}
	db.tailPages.Add(1)
	list, err := json.Marshal(ids[offset:])
	if err != nil {
		return Expr{}, false, err
	}
	return Expr{SQL: `t.id IN (SELECT value FROM json_each(?))`, Args: []any{string(list)}, fromOffset: true}, true, nil
}

// wordsCost is about how many entries of the word index reading the matches of q over
// every log reads: its matches, or for several words the sum of the counts kept for
// each word, when greater (the index reads each word's entries to find the logs that
// hold them all). A word dense enough to cost much has its count kept by the
// search_counts job; one without is not counted here. every is q's count over every
// log.
func (db *DB) wordsCost(ctx context.Context, q string, every func() (int, error)) (int64, error) {
	n, err := every()
	if err != nil {
		return 0, err
	}
	words := searchWords(q)
	if len(words) < 2 {
		return int64(n), nil
	}
	var sum int64
	for _, w := range words {
		var kept int64
		err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(total), 0) FROM command_log_search_counts WHERE q = ? AND device_id = ?`,
			searchKey(w), searchCountAll).Scan(&kept)
		if err != nil {
			return 0, fmt.Errorf("store: count command_logs: %w", err)
		}
		sum += kept
	}
	return max(int64(n), sum), nil
}

// noWindow is the window of logSearchRow that holds no id.
var noWindow = [2]int64{0, -1}

// walkWindow is the range of ids of the logs a walk along created (q's order, from its
// cursor) is expected to pass: twice about as many as reach, at least walkWindowLeast
// and at most walkWindowMost of them; none when their ids spread over more than
// windowSpread times as many.
func (db *DB) walkWindow(ctx context.Context, q Query, desc bool, reach int64) ([2]int64, error) {
	n := min(max(2*reach, walkWindowLeast), walkWindowMost)
	if db.search.windowLogs > 0 {
		n = db.search.windowLogs
	}
	dir := orderDir(desc)
	where, err := q.afterCond()
	if err != nil {
		return noWindow, err
	}
	var w [2]int64
	err = db.reader(ctx).QueryRowContext(ctx, `SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM (SELECT t.id
		FROM command_logs t INDEXED BY command_logs_created WHERE `+where.SQL+` ORDER BY t.created `+dir+`, t.id `+dir+` LIMIT ?)`,
		append(slices.Clip(where.Args), n)...).Scan(&w[0], &w[1])
	if err != nil || w[1]-w[0] > db.search.windowSpread*n {
		// Logs written out of their created order: the range would hold many more
		// matches than the walk passes.
		return noWindow, err
	}
	return w, nil
}

// The fewest and the most logs walkWindow spans.
const (
	walkWindowLeast = 2000
	walkWindowMost  = 200_000
)

// logSearchRow is logSearch as a test of one log t, for a walk along an index: its
// names against the few matching distinct names (each list read once per query), its
// text against the word index at its rowid. The unary + keeps SQLite from starting
// from the names' indexes.
//
// named is false when no log's name holds q (searchNamed): only the words are tested.
// A log whose id is within window (lo, hi; none when hi < lo) is tested against the word
// index's matches in that range, read once per query: a walk that passes thousands of
// logs would otherwise set the index up anew for each.
func logSearchRow(q string, window [2]int64, named bool) Expr {
	var ors []Expr
	for kind, col := range logNameColumns {
		if !named {
			break // no name holds q: the log's names need not be read
		}
		ors = append(ors, Expr{SQL: `+t.` + col + ` IN (SELECT n.name FROM command_log_names n WHERE n.kind = ` + strconv.Itoa(kind) +
			` AND n.id IN (SELECT rowid FROM command_log_names_fts WHERE command_log_names_fts MATCH ?))`, Args: []any{ftsPhrase(q)}})
	}
	if words, ok := logWords(q); ok {
		each := Expr{SQL: `EXISTS (` + words.SQL + ` AND rowid = t.id)`, Args: words.Args}
		if lo, hi := window[0], window[1]; hi >= lo {
			args := []any{lo, hi}
			args = append(append(args, words.Args...), lo, hi)
			each = Expr{SQL: `(CASE WHEN t.id BETWEEN ? AND ? THEN t.id IN (` + words.SQL + ` AND rowid BETWEEN ? AND ?) ELSE ` + each.SQL + ` END)`,
				Args: append(args, each.Args...)}
		}
		ors = append(ors, each)
	}
	e := Or(ors...)
	e.SQL = "(" + e.SQL + ")"
	return e
}

// countLogSearch is the number of logs that match q (three characters or more), among
// those of scope.
//
// A count that read many matches is kept (command_log_search_counts): every log up to
// the newest at the time, for every log or per device, with each device's failed
// matches (the count among pairs sums each pair's). A later count adds to it the
// matches after that log only, and keeps the sum again once those are many. The kept
// counts, the logs after them, the newest log and the epoch are read in one snapshot,
// and a count is stored only if no log was deleted or changed since that snapshot.
//
// The per-device counts take each match's device from those held in memory
// (heldDevices), reading the indexes alone; unless every log matches: then they are the
// per-device counters. Without the held devices they read every match's row for its
// device, and are taken only for a search that matches many logs in all (a count from
// the indexes alone, kept in its turn); one that matches few is counted among the
// scope's logs alone.
//
// every is the count over every log when it was learnt on the way (-1 when not): the
// per-device counts sum to it. A count kept after it returns (keepLater) is not yet
// there for the caller's next count, which takes every instead.
func (db *DB) countLogSearch(ctx context.Context, q string, scope searchScope) (n, every int, err error) {
	if tx := db.batchTx(ctx); tx != nil {
		// Inside a write: counted plainly, nothing kept.
		n, err := countSearchSets(ctx, tx, q, scope)
		if scope.every() {
			return n, n, err
		}
		return n, -1, err
	}
	if scope.every() {
		return db.countKept(ctx, q, searchCountAll, nil, nil, true)
	}
	var keys []int64
	if scope.devices != "" {
		if err := json.Unmarshal([]byte(scope.devices), &keys); err != nil {
			return 0, -1, fmt.Errorf("store: count command_logs: devices %s: %w", scope.devices, err)
		}
	}
	var kept int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM command_log_search_counts WHERE q = ? AND device_id = ?`,
		q, searchCountDevices).Scan(&kept); err != nil {
		return 0, -1, fmt.Errorf("store: count command_logs: %w", err)
	}
	if kept == 0 && db.devices.cur.Load() == nil {
		all, _, err := db.countKept(ctx, q, searchCountAll, nil, nil, true)
		if err != nil || int64(all) < db.search.keep {
			if err != nil {
				return 0, -1, err
			}
			n, err := countSearchSets(ctx, db.r, q, scope)
			return n, all, err
		}
	}
	return db.countKept(ctx, q, searchCountDevices, keys, scope.pairs, true)
}

// searchScope is the logs a search is counted among: every log (the zero value); those
// of devices (a JSON array of counter keys); or those of pairs, the (device, outcome)
// pairs whose logs where keeps (a condition on the log's device and outcome alone).
type searchScope struct {
	devices string
	pairs   []logPair
	where   Expr
}

func (s searchScope) every() bool { return s.devices == "" && s.pairs == nil }

// logPair is a device's counter key and an outcome: that device's successful logs (ok),
// or its failed ones.
type logPair struct {
	key int64
	ok  bool
}

// countSearchSets counts the logs of scope that match q from the sets of their ids; for
// pairs, with the scope's condition tested on each match's row.
func countSearchSets(ctx context.Context, rq rowQueryer, q string, scope searchScope) (int, error) {
	var n int
	if scope.pairs != nil {
		sets, args := logSearchSets(q, "", 0)
		if err := rq.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE t.id IN (`+strings.Join(sets, " UNION ALL ")+`) AND `+
			scope.where.SQL, append(args, scope.where.Args...)...).Scan(&n); err != nil {
			return 0, fmt.Errorf("store: count command_logs: %w", err)
		}
		return n, nil
	}
	sets, args := logSearchSets(q, scope.devices, 0)
	if err := rq.QueryRowContext(ctx, `SELECT count(*) FROM (`+strings.Join(sets, " UNION ")+`)`, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count command_logs: %w", err)
	}
	return n, nil
}

// countKept is the count of kind mark of the logs that match q (with
// searchCountDevices, those of the devices keys and of the (device, outcome) pairs), from
// what is kept and the logs after it, and the count over every log (the sum of the
// per-device counts); it keeps the sum when those were many: with later, after it
// returns (keepLater), so that a search's page does not wait for the write.
func (db *DB) countKept(ctx context.Context, q string, mark int64, keys []int64, pairs []logPair, later bool) (n, every int, err error) {
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return 0, -1, fmt.Errorf("store: count command_logs: %w", err)
	}
	defer tx.Rollback()
	s, err := readSearchCount(ctx, tx, q, mark)
	if err != nil {
		return 0, -1, fmt.Errorf("store: count command_logs: %w", err)
	}
	var tail map[int64]int64
	if mark == searchCountDevices && s.upto == 0 {
		tail, err = db.everyLogMatches(ctx, tx, q)
	}
	if tail == nil && err == nil {
		tail, err = db.searchCountAfter(ctx, tx, q, mark, s.upto, s.newest)
	}
	if err != nil {
		return 0, -1, fmt.Errorf("store: count command_logs: %w", err)
	}
	var grown, sum int64
	for k, n := range tail {
		s.totals[k] += n
		if matchKey(k) {
			grown += n
		}
	}
	for k, n := range s.totals {
		if matchKey(k) {
			sum += n
		}
	}
	count := s.totals[searchCountAll]
	for _, k := range keys {
		count += s.totals[k]
	}
	for _, p := range pairs {
		if failed := s.totals[failedKey(p.key)]; p.ok {
			count += s.totals[p.key] - failed
		} else {
			count += failed
		}
	}
	if err := tx.Rollback(); err != nil {
		return 0, -1, fmt.Errorf("store: count command_logs: %w", err)
	}
	if grown >= db.search.keep {
		// A count that cannot be kept (the writer busy past its timeout) is taken again
		// next time; this one is right either way.
		if later {
			db.keepLater(ctx, q, mark, s)
		} else {
			_ = db.keepSearchCount(ctx, q, mark, s)
		}
	}
	return int(count), int(sum), nil
}

// keeps are the search counts being kept after their pages were answered (keepLater).
// before, when set, runs before each keep (tests).
type keeps struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	before func()
}

// keepLater keeps s as keepSearchCount does, on a goroutine of its own; nothing once the
// DB is closing (Close waits for those under way). A log deleted or changed meanwhile
// leaves it unkept, as it would have before.
func (db *DB) keepLater(ctx context.Context, q string, mark int64, s searchCount) {
	db.keeps.mu.Lock()
	defer db.keeps.mu.Unlock()
	if db.keeps.closed {
		return
	}
	db.keeps.wg.Add(1)
	before := db.keeps.before
	go func() {
		defer db.keeps.wg.Done()
		if before != nil {
			before()
		}
		_ = db.keepSearchCount(context.WithoutCancel(ctx), q, mark, s)
	}()
}

// stop lets no keep start and waits for those under way (Close).
func (k *keeps) stop() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.wg.Wait()
}

// Settle waits for the search counts still being kept after their pages were answered.
// Benchmarks that delete kept counts call it first.
func (db *DB) Settle() {
	db.keeps.wg.Wait()
}

// searchCount is a search's kept count as read in one snapshot: the logs up to upto
// counted in totals (by key), the newest log and the epoch of that snapshot.
type searchCount struct {
	upto, newest, epoch int64
	totals              map[int64]int64
}

// readSearchCount reads q's kept counts of kind mark: with searchCountDevices, those of
// every device.
func readSearchCount(ctx context.Context, tx *sql.Tx, q string, mark int64) (searchCount, error) {
	s := searchCount{totals: map[int64]int64{}}
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT epoch FROM command_log_search_epoch WHERE id = 1),
		(SELECT coalesce(max(id), 0) FROM command_logs)`).Scan(&s.epoch, &s.newest); err != nil {
		return s, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT device_id, upto, total FROM command_log_search_counts
		WHERE q = ?1 AND (device_id = ?2 OR (?2 = -2 AND `+perDeviceKeys+`))`, q, mark)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	totals := map[int64]int64{}
	var upto int64 = -1
	for rows.Next() {
		var key, at, n int64
		if err := rows.Scan(&key, &at, &n); err != nil {
			return s, err
		}
		totals[key] = n
		if key == mark {
			upto = at
		}
	}
	if err := rows.Err(); err != nil || upto < 0 {
		// Nothing kept (per-device rows without their mark are never written).
		return s, err
	}
	delete(totals, searchCountDevices)
	s.upto, s.totals = upto, totals
	return s, nil
}

// everyLogMatches is, when q matches every log, the number of logs of each device and of
// its failed ones (from the per-device counters, without reading a log); else nil.
//
// The newest everyLogProbe logs are tested first: a search most logs do not match is
// told apart without counting its matches.
func (db *DB) everyLogMatches(ctx context.Context, tx *sql.Tx, q string) (map[int64]int64, error) {
	total, err := logCount(ctx, tx, "")
	if err != nil {
		return nil, err
	}
	// The newest logs' ids are tested against the word index's matches among them, read
	// once, rather than setting the index up for each.
	var window [2]int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM
		(SELECT id FROM command_logs ORDER BY id DESC LIMIT `+strconv.Itoa(everyLogProbe)+`)`).Scan(&window[0], &window[1]); err != nil {
		return nil, err
	}
	row := logSearchRow(q, window, true)
	var probed int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT id, command_name, device_name, username
		FROM command_logs ORDER BY id DESC LIMIT `+strconv.Itoa(everyLogProbe)+`) t WHERE `+row.SQL, row.Args...).Scan(&probed); err != nil {
		return nil, err
	}
	if probed < min(total, everyLogProbe) {
		return nil, nil
	}
	s, err := readSearchCount(ctx, tx, q, searchCountAll)
	if err != nil {
		return nil, err
	}
	tail, err := db.searchCountAfter(ctx, tx, q, searchCountAll, s.upto, s.newest)
	if err != nil {
		return nil, err
	}
	if s.totals[searchCountAll]+tail[searchCountAll] != int64(total) {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT device_id, total, total - successful FROM command_log_device_totals WHERE total > 0`)
	if err != nil {
		return nil, err
	}
	return scanDeviceCounts(rows)
}

// searchCountAfter counts the logs after upto, up to newest (the newest in tx's
// snapshot), that match q: with searchCountAll in all, else by device counter key and
// the failed ones by failedKey (from the devices held, or each log read for its device
// and outcome). A count from the word index
// alone is taken in halves at once (countHalves).
func (db *DB) searchCountAfter(ctx context.Context, tx *sql.Tx, q string, mark, upto, newest int64) (map[int64]int64, error) {
	// The matches: with no name holding q, the word index's alone; else the sets of the
	// names' and the words' matches, which may hold a log twice (a log whose names both
	// hold q, or whose text does too).
	words, only, err := wordsOnly(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	several := !only
	// With the devices held, the sets' repeats are dropped as they are counted rather
	// than by a UNION.
	var keys *heldKeys
	if mark != searchCountAll || several {
		var err error
		if keys, err = db.devices.at(ctx, tx, db.search.keysInline); err != nil {
			return nil, err
		}
	}
	if !several && (keys != nil || mark == searchCountAll) {
		counts, ok, err := db.countHalves(ctx, tx, upto, newest, func(ctx context.Context, rq rowQueryer, lo, hi int64) (map[int64]int64, bool, error) {
			ids, args := wordsIn(words, lo, hi)
			if keys != nil {
				return db.devices.counts(ctx, rq, keys, ids, args, false)
			}
			var n int64
			err := rq.QueryRowContext(ctx, `SELECT count(*) FROM (`+ids+`)`, args...).Scan(&n)
			return map[int64]int64{searchCountAll: n}, true, err
		})
		if err != nil || (ok && mark != searchCountAll) {
			return counts, err
		}
		if ok {
			return countsInAll(counts), nil
		}
	}
	sets, setArgs := logSearchSets(q, "", upto)
	if !several {
		sets, setArgs = []string{words.SQL + ` AND rowid > ?`}, append(slices.Clip(words.Args), upto)
	}
	if keys != nil && several {
		counts, ok, err := db.devices.counts(ctx, tx, keys, strings.Join(sets, " UNION ALL "), setArgs, true)
		if err != nil || (ok && mark != searchCountAll) {
			return counts, err
		}
		if ok {
			return countsInAll(counts), nil
		}
	}
	if mark == searchCountAll {
		// UNION drops the sets' repeats.
		var n int64
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (`+strings.Join(sets, " UNION ")+`)`, setArgs...).Scan(&n)
		return map[int64]int64{searchCountAll: n}, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT coalesce(x.device_id, 0), count(*), count(*) - sum(x.success) FROM command_logs x
		WHERE x.id IN (`+strings.Join(sets, " UNION ALL ")+`) GROUP BY 1`, setArgs...)
	if err != nil {
		return nil, err
	}
	return scanDeviceCounts(rows)
}

// countsInAll is the sum of the matches of counts by device key, as the count over every
// log.
func countsInAll(counts map[int64]int64) map[int64]int64 {
	var n int64
	for k, c := range counts {
		if matchKey(k) {
			n += c
		}
	}
	return map[int64]int64{searchCountAll: n}
}

// wordsOnly is the word index's matches of q (logWords), and true when they are all
// of q's matches: q has a word and no name holds it (searchNamed).
func wordsOnly(ctx context.Context, rq rowQueryer, q string) (Expr, bool, error) {
	words, ok := logWords(q)
	if !ok {
		return words, false, nil
	}
	named, err := searchNamed(ctx, rq, q)
	return words, err == nil && !named, err
}

// wordsIn is the query of words's matches whose ids are in (lo, hi], and its arguments.
func wordsIn(words Expr, lo, hi int64) (string, []any) {
	return words.SQL + ` AND rowid > ? AND rowid <= ?`, append(slices.Clip(words.Args), lo, hi)
}

// searchNamed is whether q is in a command, device or user name of some log.
func searchNamed(ctx context.Context, rq rowQueryer, q string) (bool, error) {
	var named bool
	err := rq.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM command_log_names_fts WHERE command_log_names_fts MATCH ?)`,
		ftsPhrase(q)).Scan(&named)
	return named, err
}

// keepSearchCount stores s, with the matches counted up to its newest log, as q's
// count of kind mark, unless a log was deleted or changed since s was read. It writes
// outside Write: a kept count changes no answer, so no cache needs to know.
func (db *DB) keepSearchCount(ctx context.Context, q string, mark int64, s searchCount) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var epoch int64
	if err := tx.QueryRowContext(ctx, `SELECT epoch FROM command_log_search_epoch WHERE id = 1`).Scan(&epoch); err != nil {
		return err
	}
	if epoch != s.epoch {
		return nil
	}
	// The per-device counts cover every log: their sum is kept as the count over every
	// log too.
	if _, err := tx.ExecContext(ctx, `DELETE FROM command_log_search_counts
		WHERE q = ?1 AND (device_id = ?2 OR (?2 = -2 AND (device_id = -1 OR `+perDeviceKeys+`)))`, q, mark); err != nil {
		return err
	}
	var taken int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(taken), 0) + 1 FROM command_log_search_counts`).Scan(&taken); err != nil {
		return err
	}
	var sum int64
	rows := [][2]int64{}
	for k, n := range s.totals {
		if matchKey(k) {
			sum += n
		}
		if k != mark {
			rows = append(rows, [2]int64{k, n})
		}
	}
	if mark == searchCountAll {
		sum = s.totals[searchCountAll]
	} else {
		rows = append(rows, [2]int64{searchCountAll, sum})
	}
	rows = append(rows, [2]int64{mark, sum})
	list, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO command_log_search_counts (q, device_id, upto, total, taken)
		SELECT ?, value ->> 0, ?, value ->> 1, ? FROM json_each(?)`, q, s.newest, taken, string(list)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM command_log_search_counts WHERE q IN
		(SELECT q FROM command_log_search_counts GROUP BY q ORDER BY max(taken) DESC LIMIT -1 OFFSET ?)`, searchCountQueries); err != nil {
		return err
	}
	return tx.Commit()
}

// lessSearchCounts takes off the kept search counts the logs of ids (list: the same as a
// JSON array) that match their search and that each covers, before the caller deletes
// those logs with pruning set (migration 0064), so that the delete leaves the counts.
// A device's count that comes to none goes, as a count never keeps one.
func lessSearchCounts(ctx context.Context, tx *sql.Tx, ids []int64, list string) error {
	lo, hi := slices.Min(ids), slices.Max(ids)
	// The marks: the count over every log (-1) and the per-device counts' (-2), whose
	// upto their devices' rows share.
	rows, err := tx.QueryContext(ctx, `SELECT q, device_id, upto FROM command_log_search_counts
		WHERE upto >= ? AND device_id < 0 ORDER BY q`, lo)
	if err != nil {
		return err
	}
	type mark struct {
		q         string
		key, upto int64
	}
	var marks []mark
	for rows.Next() {
		var m mark
		if err := rows.Scan(&m.q, &m.key, &m.upto); err != nil {
			rows.Close()
			return err
		}
		marks = append(marks, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// less is each count's loss: search, counter key, matches.
	var less [][3]any
	for len(marks) > 0 {
		// upto of the count over every log, and of the per-device counts; -1 for none.
		q, upto := marks[0].q, [2]int64{-1, -1}
		n := 0
		for ; n < len(marks) && marks[n].q == q; n++ {
			switch marks[n].key {
			case searchCountAll:
				upto[0] = marks[n].upto
			case searchCountDevices:
				upto[1] = marks[n].upto
			}
		}
		marks = marks[n:]
		named, err := searchNamed(ctx, tx, q)
		if err != nil {
			return err
		}
		row := logSearchRow(q, [2]int64{lo, hi}, named)
		rows, err := tx.QueryContext(ctx, `SELECT coalesce(t.device_id, 0), sum(t.id <= ?1), sum(t.id <= ?2), sum(t.id <= ?2 AND NOT t.success)
			FROM command_logs t WHERE t.id IN (SELECT value FROM json_each(?3)) AND `+row.SQL+` GROUP BY 1`,
			append([]any{upto[0], upto[1], list}, row.Args...)...)
		if err != nil {
			return err
		}
		var every, devices int64
		for rows.Next() {
			var key, e, d, f int64
			if err := rows.Scan(&key, &e, &d, &f); err != nil {
				rows.Close()
				return err
			}
			every, devices = every+e, devices+d
			if d > 0 {
				less = append(less, [3]any{q, key, d})
			}
			if f > 0 {
				less = append(less, [3]any{q, failedKey(key), f})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if every > 0 {
			less = append(less, [3]any{q, searchCountAll, every})
		}
		if devices > 0 {
			less = append(less, [3]any{q, searchCountDevices, devices})
		}
	}
	if len(less) == 0 {
		return nil
	}
	b, err := json.Marshal(less)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE command_log_search_counts SET total = total - (j.value ->> 2)
		FROM json_each(?1) j WHERE q = j.value ->> 0 AND device_id = j.value ->> 1`, string(b)); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM command_log_search_counts WHERE total <= 0 AND `+perDeviceKeys+`
		AND (q, device_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`, string(b))
	return err
}

// scanDeviceCounts reads rows of (counter key, count, failed count) into a map, the
// failed ones under failedKey, and closes them.
func scanDeviceCounts(rows *sql.Rows) (map[int64]int64, error) {
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var key, n, failed int64
		if err := rows.Scan(&key, &n, &failed); err != nil {
			return nil, err
		}
		out[key] = n
		if failed > 0 {
			out[failedKey(key)] = failed
		}
	}
	return out, rows.Err()
}

// namedPage is the condition of a page of a viewer of some devices (a JSON array of
// counter keys) reaching reach logs along created: the logs namedNewest finds, and every
// log's word matches (each then read for its device). False when that is expected to
// read more than the other ways: the set of every log's matches and the walk along
// created to the page (searchBySet), or the devices' own sets, whose every match is
// read. Reading stops at that cost, so a search whose names' logs lie mostly on other
// devices than the viewer's costs at most twice the other way's. everyCount is q's
// count over every log.
func (db *DB) namedPage(ctx context.Context, page Query, q, devices string, desc bool, reach int64, total int, all int64,
	everyCount func() (int, error)) (Expr, bool, error) {
	every, err := everyCount()
	if err != nil {
		return Expr{}, false, err
	}
	budget := min(int64(every)+reach*all/int64(total), db.search.rowRead*int64(total)) / db.search.rowRead
	if db.search.namedRows > 0 {
		budget = db.search.namedRows
	} else if 2*reach*int64(every)/int64(total) > budget {
		// Each name is expected to read its logs on every device to find reach of the
		// viewer's.
		return Expr{}, false, nil
	}
	words, hasWords := logWords(q)
	if hasWords {
		var n int64
		if err := db.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM (`+words.SQL+` LIMIT ?)`,
			append(slices.Clip(words.Args), budget)...).Scan(&n); err != nil {
			return Expr{}, false, err
		}
		if budget -= n; budget <= 0 {
			return Expr{}, false, nil
		}
	}
	var keys []int64
	if err := json.Unmarshal([]byte(devices), &keys); err != nil {
		return Expr{}, false, fmt.Errorf("devices %s: %w", devices, err)
	}
	after, err := page.afterCond()
	if err != nil {
		return Expr{}, false, err
	}
	ids, ok, err := db.namedNewest(ctx, q, keys, desc, after, reach, budget)
	if err != nil || !ok {
		return Expr{}, false, err
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return Expr{}, false, err
	}
	sets, args := []string{`SELECT value FROM json_each(?)`}, []any{string(list)}
	if hasWords {
		sets, args = append(sets, words.SQL), append(args, words.Args...)
	}
	return Expr{SQL: `t.id IN (` + strings.Join(sets, " UNION ALL ") + `)`, Args: args}, true, nil
}

// namedNewest are, for a viewer of the devices keys (counter keys), the first reach logs
// in created order (desc or not) after a page's cursor (after, a condition on t) among
// each name's logs that holds q: each name's logs read along its index
// (command_logs_<column>, by created then id) for their device, until reach of them are
// the viewer's or the name's logs end. It gives up, with false, when more than
// namedMost names hold q or reading would pass budget logs: the names' logs then lie
// mostly on other devices than the viewer's.
func (db *DB) namedNewest(ctx context.Context, q string, keys []int64, desc bool, after Expr, reach, budget int64) ([]int64, bool, error) {
	rq := db.reader(ctx)
	rows, err := rq.QueryContext(ctx, `SELECT kind, name FROM command_log_names WHERE id IN
		(SELECT rowid FROM command_log_names_fts WHERE command_log_names_fts MATCH ?) LIMIT ?`, ftsPhrase(q), namedMost+1)
	if err != nil {
		return nil, false, err
	}
	type name struct {
		kind int
		name string
	}
	var names []name
	for rows.Next() {
		var n name
		if err := rows.Scan(&n.kind, &n.name); err != nil {
			rows.Close()
			return nil, false, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(names) > namedMost {
		return nil, false, err
	}
	visible := make(map[int64]bool, len(keys))
	for _, k := range keys {
		visible[k] = true
	}
	dir := orderDir(desc)
	var ids []int64
	for _, n := range names {
		if n.kind < 0 || n.kind >= len(logNameColumns) {
			continue
		}
		col := logNameColumns[n.kind]
		rows, err := rq.QueryContext(ctx, `SELECT t.id, coalesce(t.device_id, 0) FROM command_logs t INDEXED BY command_logs_`+col+
			` WHERE t.`+col+` = ? AND `+after.SQL+` ORDER BY t.created `+dir+`, t.id `+dir, append([]any{n.name}, after.Args...)...)
		if err != nil {
			return nil, false, err
		}
		for found := int64(0); found < reach && rows.Next(); {
			if budget--; budget < 0 {
				rows.Close()
				return nil, false, nil
			}
			var id, key int64
			if err := rows.Scan(&id, &key); err != nil {
				rows.Close()
				return nil, false, err
			}
			if visible[key] {
				ids, found = append(ids, id), found+1
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, false, err
		}
	}
	return ids, true, nil
}

// namedMost is the most distinct names holding a search that namedNewest reads.
const namedMost = 16
