package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// CommandLogs is netbox_toolkit_plugin.commandlog: the read-only audit log of
// executions, written by the server only. A log keeps the command's, device's and
// user's names, so it outlives them. The export's columns follow the Export flags, in
// this order.
var CommandLogs = declare(&Model{
	Type: TypeCommandLog, Name: "CommandLog", Table: "command_logs", DefaultOrder: "-created", DisplayFields: []string{"command_name", "device_name"},
	Display:    func(r Row) string { return fmt.Sprintf("%s on %s", r["command_name"], r["device_name"]) },
	TextSearch: logSearch,
	Fields: []Field{
		{Name: "username", Column: "username", Kind: KindString, Access: ReadOnly, Filter: FilterLookups, Sort: true,
			SortIndex: "command_logs_username", SortThen: "created",
			SortValues: "SELECT DISTINCT username FROM command_log_user_counts", Search: true, Export: Exported, Doc: "user who executed the command"},
		{Name: "device", Column: "device_id", Kind: KindInt, Rel: TypeDevice, KeptName: "device_name", Access: ReadOnly,
			Export: Exported, Doc: "id (null once the device is deleted), url (absent then), name, display"},
		{Name: "command", Column: "command_id", Kind: KindInt, Rel: TypeCommand, KeptName: "command_name", Access: ReadOnly,
			Export: Exported, Doc: "id (null once the command is deleted), url (absent then), name, display"},
		{Name: "command_type", Column: "command_type", Kind: KindString, Access: ReadOnly, Choices: CommandTypes,
			Default: CommandShow, Export: Exported},
		{Name: "success", Column: "success", Kind: KindBool, Access: ReadOnly, Filter: FilterExact, Sort: true,
			SortIndex: "command_logs_success", SortThen: "created",
			SortValues: "SELECT DISTINCT success FROM command_log_user_counts", Export: Exported, Doc: "outcome (true/false)"},
		{Name: "execution_duration", Column: "execution_duration", Kind: KindFloat, Access: ReadOnly, Sort: true,
			SortIndex: "command_logs_duration", SortThen: "created", Export: Exported, Doc: "seconds"},
		{Name: "error_message", Column: "error_message", Kind: KindString, Access: ReadOnly, Export: Exported,
			Doc: "empty when successful"},
		{Name: "user", Column: "user_id", Kind: KindInt, Rel: TypeUser, KeptName: "username", Access: ReadOnly, Null: true},
		{Name: "execution_time", Column: "execution_time", Kind: KindTime, Access: ReadOnly},
		{Name: "parsed_output", Column: "parsed_output", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "ParsedOutput"},
		{Name: "syntax_error", Column: "syntax_error", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "SyntaxError"},
		{Name: "sent_command", Column: "sent_command", Kind: KindString, Access: ReadOnly, Export: Exported,
			Doc: "exactly what was sent to the device: the command with its variables substituted (and quoted, " +
				"where the driver quotes); empty for logs written before it was recorded"},
		{Name: "variables", Column: "variables", Kind: KindJSON, Access: ReadOnly, Null: true, Export: Exported,
			Schema: "LogVariables", Doc: "the value each variable took (a default included); null for logs written before"},
		{Name: "credential_set", Column: "credential_set_id", Kind: KindInt, Rel: TypeCredentialSet,
			KeptName: "credential_set_name", Access: ReadOnly, Null: true, Export: Exported,
			Doc: "the credential set used: id and name, kept after the set is deleted"},
		{Name: "source", Column: "source", Kind: KindString, Access: ReadOnly, Null: true, Choices: LogSources,
			Filter: FilterExact, Export: Exported, Doc: "where the execution came from; null for logs written before"},
		{Name: "client_address", Column: "client_address", Kind: KindString, Access: ReadOnly, Filter: FilterLookups,
			Export: Exported, Label: "Client address", Doc: "the address the request came from"},
		{Name: "schedule", Kind: KindJSON, Access: ReadOnly, Null: true, Select: logScheduleSQL, Schema: "LogSchedule",
			Doc: "the schedule that ran the execution (source schedule): its id and name as they were; null otherwise"},
		{Name: "output", Column: "output", Kind: KindString, Access: ReadOnly, Export: ExportOnRequest, Lazy: true},
		{Name: "failure", Column: "failure", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "ExecutionFailure",
			Doc: "why a failed execution failed, in parts; null on success or a syntax error"},
		{Name: "command_name", Column: "command_name", Kind: KindString, Access: Internal, Search: true},
		{Name: "device_name", Column: "device_name", Kind: KindString, Access: Internal, Search: true},
		{Name: "credential_set_name", Column: "credential_set_name", Kind: KindString, Access: Internal},
	},
	Filters: map[string]Filter{
		"device_id":   {Path: "device", Doc: "device id"},
		"command_id":  {Path: "command", Doc: "command id"},
		"user_id":     {Path: "user", Doc: "id of the user who executed"},
		"schedule_id": {SQL: logScheduleFilter, Kind: KindInt, Doc: "id of the schedule that ran it"},
		"created":     {Path: "created", Lookups: true, Doc: "creation time; created__gte and created__lte bound a range"},
	},
})

// LogSources are where an execution may come from.
var LogSources = []Choice{{"api", "API (execute)"}, {"bulk", "API (bulk execute)"}, {"ui", "Web interface"},
	{"schedule", "Schedule"}, {"backup", "Config backup"}, {"hub", "Hub (a job from the site's hub)"}}

// logSearch is ?q= on logs, through the full-text indexes the triggers keep (a LIKE
// would scan every log): the names (command, device, user) contain q, as a substring,
// or the output and error message hold every word of q. Quoting each word keeps q's
// text from being read as FTS5 query syntax.
//
// From three characters on, q is matched against the distinct names of each kind
// (command_log_names), with the tokenizer the names of every log would be matched with
// (a phrase matches within one name, never across two), and the logs with those names
// come from the names' indexes. The whole condition is one set of log ids, so that
// SQLite starts from the matches rather than from every log a viewer may see.
func logSearch(q string) Expr {
	if utf8.RuneCountInString(q) < 3 {
		// The trigram index needs three characters; two are rare and their scan short
		// enough to bear.
		pat := "%" + likeEscape(q) + "%"
		var ors []Expr
		for _, col := range logNameColumns {
			ors = append(ors, Expr{SQL: `t.` + col + ` LIKE ? ESCAPE '\'`, Args: []any{pat}})
		}
		if words, ok := logWords(q); ok {
			ors = append(ors, Expr{SQL: `t.id IN (` + words.SQL + `)`, Args: words.Args})
		}
		return Or(ors...)
	}
	q = searchKey(q)
	sets, args := logSearchSets(q, "", 0)
	return Expr{SQL: `t.id IN (` + strings.Join(sets, " UNION ALL ") + `)`, Args: args, logQ: q}
}

// logSearchSets are the queries of the ids of the logs that match q (three characters
// or more), one per name column and one for the words; with devices (a JSON array of
// counter keys, 0 for the logs of deleted devices) only the logs of those devices;
// without, and with after above 0, only the logs whose id is greater than after (read
// along the ids, not the names' indexes: the logs after a kept count are few).
func logSearchSets(q, devices string, after int64) ([]string, []any) {
	var sets []string
	var args []any
	var keys []int64
	if devices != "" {
		if err := json.Unmarshal([]byte(devices), &keys); err != nil {
			keys = nil
		}
	}
	// Each set on its own, then once per device condition: the devices that exist and,
	// apart, the deleted ones (device_id NULL), so that an index on device_id serves the
	// first. Only the command names are looked up by device first (the index on
	// (device_id, command_name)); the other sets start from their own index and check
	// the device after (the unary + keeps SQLite from walking every log of the devices).
	add := func(set string, setArgs []any) {
		if devices == "" && strings.HasPrefix(set, "x.id IN (") {
			words := strings.TrimSuffix(strings.TrimPrefix(set, "x.id IN ("), ")")
			if after > 0 {
				words, setArgs = words+` AND rowid > ?`, append(slices.Clip(setArgs), after)
			}
			sets, args = append(sets, words), append(args, setArgs...)
			return
		}
		if devices == "" && after > 0 {
			sets, args = append(sets, `SELECT x.id FROM command_logs x WHERE x.id > ? AND +`+set), append(append(args, after), setArgs...)
			return
		}
		if devices == "" {
			sets, args = append(sets, `SELECT x.id FROM command_logs x WHERE `+set), append(args, setArgs...)
			return
		}
		plus := "+"
		if strings.Contains(set, "x.command_name IN") {
			plus = ""
		}
		sets = append(sets, `SELECT x.id FROM command_logs x WHERE `+plus+`x.device_id IN (SELECT value FROM json_each(?) WHERE value > 0) AND `+set)
		args = append(append(args, devices), setArgs...)
		if slices.Contains(keys, 0) {
			sets, args = append(sets, `SELECT x.id FROM command_logs x WHERE x.device_id IS NULL AND `+set), append(args, setArgs...)
		}
	}
	for kind, col := range logNameColumns {
		add(`x.`+col+` IN (SELECT n.name FROM command_log_names n WHERE n.kind = `+strconv.Itoa(kind)+
			` AND n.id IN (SELECT rowid FROM command_log_names_fts WHERE command_log_names_fts MATCH ?))`, []any{ftsPhrase(q)})
	}
	if words, ok := logWords(q); ok {
		add(`x.id IN (`+words.SQL+`)`, words.Args)
	}
	return sets, args
}

// logSearchTop is logSearch with each name's set cut to its first top logs by
// created (dir ASC or DESC) then id; the words' set is whole.
func logSearchTop(q, dir string, top int) Expr {
	var sets []string
	var args []any
	for kind, col := range logNameColumns {
		sets = append(sets, `SELECT id FROM (SELECT x.id FROM command_logs x WHERE x.`+col+` IN (SELECT n.name FROM command_log_names n
			WHERE n.kind = `+strconv.Itoa(kind)+` AND n.id IN (SELECT rowid FROM command_log_names_fts WHERE command_log_names_fts MATCH ?))
			ORDER BY x.created `+dir+`, x.id `+dir+` LIMIT ?)`)
		args = append(args, ftsPhrase(q), top)
	}
	if words, ok := logWords(q); ok {
		sets, args = append(sets, words.SQL), append(args, words.Args...)
	}
	return Expr{SQL: `t.id IN (` + strings.Join(sets, " UNION ALL ") + `)`, Args: args}
}

// logWords is the text part of ?q=, the ids of the logs whose output and error
// message hold every word of q; false when q has no word.
func logWords(q string) (Expr, bool) {
	var words []string
	for _, w := range searchWords(q) {
		words = append(words, ftsPhrase(w))
	}
	if len(words) == 0 {
		return Expr{}, false
	}
	return Expr{SQL: `SELECT rowid FROM command_logs_text WHERE command_logs_text MATCH ?`,
		Args: []any{strings.Join(words, " ")}}, true
}

// searchWords are the words of ?q= that the word index is searched for: those with a
// letter or a digit.
func searchWords(q string) []string {
	var words []string
	for _, w := range strings.Fields(q) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			words = append(words, w)
		}
	}
	return words
}

// logNameColumns are the log's name columns by their kind in command_log_names.
var logNameColumns = []string{"command_name", "device_name", "username"}

// ftsPhrase quotes text as one FTS5 phrase.
func ftsPhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// insertSQL is the INSERT of a model's stored columns (references by id, kept names,
// JSON as text, the time stamps), for rows the server writes whole (logs).
func insertSQL(m *Model) (string, []*Field) {
	var fields []*Field
	var cols []string
	for i := range m.Fields {
		if f := &m.Fields[i]; f.Column != "" && f.Select == "" && f.Name != "id" {
			fields, cols = append(fields, f), append(cols, f.Column)
		}
	}
	return `INSERT INTO ` + m.Table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + placeholders(len(cols)) + `)`, fields
}

var insertLogSQL, logColumns = insertSQL(CommandLogs)

// logArgs are the column values of one log: a field left out gets its Default, else
// NULL if it is a reference or Null, else its kind's zero value; created is the store's
// clock unless given, last_updated and execution_time default to created. A name that
// is no field is an error, not a silent loss. stampAt are the positions of the columns
// that take created when the clock gives it (nil when given): the log queue stamps them
// again as the log joins it (logQueue.stamp).
func (db *DB) logArgs(v Values) ([]any, []int, error) {
	created, _ := v["created"].(time.Time)
	clocked := created.IsZero()
	if clocked {
		created = db.now()
	}
	args := make([]any, len(logColumns))
	var stampAt []int
	for i, f := range logColumns {
		val, ok := v[f.Name]
		switch {
		case f.Name == "created" || f.Name == "last_updated" || (f.Name == "execution_time" && !ok):
			val = created
			if clocked {
				stampAt = append(stampAt, i)
			}
		case !ok && f.Default != nil:
			val = f.Default
		case !ok && f.Rel == "" && !f.Null:
			val = zeroOf(f.Kind)
		}
		args[i] = toColumn(f, val)
	}
	for name := range v {
		if _, ok := CommandLogs.Field(name); !ok {
			return nil, nil, fmt.Errorf("store: command log: unknown field %q", name)
		}
	}
	return args, stampAt, nil
}

// zeroOf is the value a log's column takes when the execution gave none.
func zeroOf(k Kind) any {
	switch k {
	case KindString:
		return ""
	case KindInt:
		return 0
	case KindFloat:
		return 0.0
	case KindBool:
		return false
	}
	return nil
}

// CreateLog records one execution, field name → value as in a write (a reference by id,
// JSON as any value that marshals), and returns the log's id once it is committed. Logs
// of concurrent executions are committed together (see logQueue).
func (db *DB) CreateLog(ctx context.Context, v Values) (int64, error) {
	args, stampAt, err := db.logArgs(v)
	if err != nil {
		return 0, err
	}
	var id int64
	if tx := db.batchTx(ctx); tx != nil {
		var res sql.Result
		if res, err = tx.ExecContext(ctx, insertLogSQL, args...); err == nil {
			id, err = res.LastInsertId()
		}
	} else {
		id, err = db.insertLog(ctx, args, stampAt)
	}
	if err != nil {
		return 0, fmt.Errorf("store: create log: %w", constraintErr(err, "command log"))
	}
	return id, nil
}

// InsertLogs records many executions in one transaction with one prepared statement:
// the bulk path for the demo seed and benchmarks.
func (db *DB) InsertLogs(ctx context.Context, logs []Values) error {
	_, err := db.InsertLogSeq(ctx, slices.Values(logs))
	return err
}

// InsertLogSeq is InsertLogs for logs made on the fly, so that a million of them never
// sit in memory at once. It returns how many it inserted.
func (db *DB) InsertLogSeq(ctx context.Context, logs iter.Seq[Values]) (int, error) {
	return db.BulkLogs(ctx, func(tx *sql.Tx) (int, error) { return db.insertLogRows(ctx, tx, logs) })
}

// counterTriggers are the per-row insert triggers that keep the statistics counters.
var counterTriggers = []string{"command_logs_ai", "command_logs_device_ai", "command_logs_hours_ai", "command_logs_names_ai",
	"command_logs_users_ai"}

// BulkLogs runs insert, which adds logs inside the transaction and says how many, with
// the statistics counters brought up to date once at the end rather than row by row.
//
// The per-row insert triggers that keep the counters cost more than the insert itself,
// so inside the transaction they are dropped, the rows go in, the counters are updated
// with a few aggregate statements over the new rows, and the triggers are created again
// from their own stored text. DDL is transactional in SQLite: other connections never
// see the table without its triggers.
func (db *DB) BulkLogs(ctx context.Context, insert func(tx *sql.Tx) (int, error)) (int, error) {
	n := 0
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var lastID int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM command_logs`).Scan(&lastID); err != nil {
			return fmt.Errorf("store: insert logs: %w", err)
		}
		triggers := make([]string, len(counterTriggers))
		for i, name := range counterTriggers {
			if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`, name).
				Scan(&triggers[i]); err != nil {
				return fmt.Errorf("store: insert logs: read trigger %s: %w", name, err)
			}
			if _, err := tx.ExecContext(ctx, `DROP TRIGGER `+name); err != nil {
				return fmt.Errorf("store: insert logs: %w", err)
			}
		}
		var err error
		if n, err = insert(tx); err != nil {
			return err
		}
		if err := addLogCounters(ctx, tx, lastID); err != nil {
			return fmt.Errorf("store: insert logs: counters: %w", err)
		}
		for _, trigger := range triggers {
			if _, err := tx.ExecContext(ctx, trigger); err != nil {
				return fmt.Errorf("store: insert logs: restore trigger: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func (db *DB) insertLogRows(ctx context.Context, tx *sql.Tx, logs iter.Seq[Values]) (int, error) {
	stmt, err := tx.PrepareContext(ctx, insertLogSQL)
	if err != nil {
		return 0, fmt.Errorf("store: insert logs: %w", err)
	}
	defer stmt.Close()
	n := 0
	for v := range logs {
		args, _, err := db.logArgs(v)
		if err != nil {
			return n, err
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return n, fmt.Errorf("store: insert logs: %w", constraintErr(err, "command log"))
		}
		n++
	}
	return n, nil
}

// addLogCounters does for every log after lastID what the insert trigger does for one
// (rowids only grow inside the one write transaction).
func addLogCounters(ctx context.Context, tx *sql.Tx, lastID int64) error {
	for _, q := range []string{
		`UPDATE command_log_totals SET
			total = total + (SELECT count(*) FROM command_logs WHERE id > ?1),
			successful = successful + (SELECT coalesce(sum(success), 0) FROM command_logs WHERE id > ?1)
			WHERE id = 1`,
		`INSERT INTO command_log_counts (command_name, total)
			SELECT command_name, count(*) FROM command_logs WHERE id > ?1 GROUP BY command_name
			ON CONFLICT (command_name) DO UPDATE SET total = total + excluded.total`,
		`INSERT INTO command_log_errors (error, total)
			SELECT substr(error_message, 1, 100), count(*) FROM command_logs WHERE id > ?1 AND success = 0
			GROUP BY substr(error_message, 1, 100)
			ON CONFLICT (error) DO UPDATE SET total = total + excluded.total`,
		`INSERT INTO command_log_device_totals (device_id, total, successful)
			SELECT coalesce(device_id, 0), count(*), sum(success) FROM command_logs WHERE id > ?1 GROUP BY 1
			ON CONFLICT (device_id) DO UPDATE SET total = total + excluded.total, successful = successful + excluded.successful`,
		`INSERT INTO command_log_device_counts (device_id, command_name, total)
			SELECT coalesce(device_id, 0), command_name, count(*) FROM command_logs WHERE id > ?1 GROUP BY 1, 2
			ON CONFLICT (device_id, command_name) DO UPDATE SET total = total + excluded.total`,
		`INSERT INTO command_log_device_errors (device_id, error, total)
			SELECT coalesce(device_id, 0), substr(error_message, 1, 100), count(*) FROM command_logs
			WHERE id > ?1 AND success = 0 GROUP BY 1, 2
			ON CONFLICT (device_id, error) DO UPDATE SET total = total + excluded.total`,
		`INSERT INTO command_log_device_hours (hour, device_id, total, successful)
			SELECT substr(created, 1, 13), coalesce(device_id, 0), count(*), sum(success) FROM command_logs
			WHERE id > ?1 GROUP BY 1, 2
			ON CONFLICT (hour, device_id) DO UPDATE SET total = total + excluded.total, successful = successful + excluded.successful`,
		`INSERT INTO command_log_user_counts (device_key, user_key, username, success, total)
			SELECT coalesce(device_id, 0), coalesce(user_id, 0), username, success, count(*) FROM command_logs
			WHERE id > ?1 GROUP BY 1, 2, 3, 4
			ON CONFLICT (device_key, user_key, username, success) DO UPDATE SET total = total + excluded.total`,
		`INSERT INTO command_log_names (kind, name, total)
			SELECT * FROM (
				SELECT 0, command_name, count(*) FROM command_logs WHERE id > ?1 GROUP BY command_name
				UNION ALL SELECT 1, device_name, count(*) FROM command_logs WHERE id > ?1 GROUP BY device_name
				UNION ALL SELECT 2, username, count(*) FROM command_logs WHERE id > ?1 GROUP BY username) WHERE true
			ON CONFLICT (kind, name) DO UPDATE SET total = total + excluded.total`,
	} {
		if _, err := tx.ExecContext(ctx, q, lastID); err != nil {
			return err
		}
	}
	return nil
}

// pruneBatch bounds how many logs one retention transaction deletes, so the writer is
// never held for long.
const pruneBatch = 5000

// PruneLogs deletes the logs created before olderThan, in batches, and returns how many
// it deleted. The triggers keep the statistics counters right. The kept search counts
// lose the deleted logs that match them (lessSearchCounts) for the first
// searchTuning.pruneKeep logs, in batches of searchTuning.pruneKeepBatch (each kept
// search reads every log of its batch, so the batches are smaller); past those, the
// counts over the logs deleted go (the search_counts job takes them again).
func (db *DB) PruneLogs(ctx context.Context, olderThan time.Time) (int64, error) {
	var total int64
	for {
		keep, size := total < db.search.pruneKeep, pruneBatch
		if keep {
			size = db.search.pruneKeepBatch
		}
		n, err := db.pruneLogBatch(ctx, olderThan, size, keep)
		total += n
		if err != nil {
			return total, fmt.Errorf("store: prune logs: %w", err)
		}
		if n < int64(size) {
			return total, nil
		}
	}
}

// pruneLogBatch deletes the oldest size logs created before olderThan in one
// transaction; with keep, the search counts kept over them are kept less those logs,
// unless the logs' ids spread over more than searchTuning.windowSpread times as many
// (logs written out of their created order): the word index's matches in that range,
// which each kept search reads, would be many more than the batch's.
func (db *DB) pruneLogBatch(ctx context.Context, olderThan time.Time, size int, keep bool) (int64, error) {
	tx := db.batchTx(ctx)
	if tx == nil {
		own, err := db.w.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		defer own.Rollback()
		tx = own
	}
	floor, err := unsentLogFloor(ctx, tx) // a log the hub has not stored stays
	if err != nil {
		return 0, err
	}
	ids, err := scalars[int64](ctx, tx, `SELECT id FROM command_logs WHERE created < ? AND id < ? ORDER BY created LIMIT ?`,
		Stamp(olderThan), floor, size)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	keep = keep && slices.Max(ids)-slices.Min(ids) < db.search.windowSpread*int64(len(ids))
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	if keep {
		// The delete leaves the kept counts (pruning), which lose its matches first.
		if err := lessSearchCounts(ctx, tx, ids, string(list)); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE command_log_search_epoch SET pruning = 1 WHERE id = 1`); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	if keep {
		if _, err := tx.ExecContext(ctx, `UPDATE command_log_search_epoch SET pruning = 0 WHERE id = 1`); err != nil {
			return 0, err
		}
	}
	if tx != db.batchTx(ctx) {
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// RecentSuccesses returns, per device, the times of successful executions since a time:
// what the rate limiter needs at start-up so that a restart does not reset it.
func (db *DB) RecentSuccesses(ctx context.Context, since time.Time) (map[int64][]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT device_id, created FROM command_logs
		WHERE success = 1 AND created >= ? AND device_id IS NOT NULL ORDER BY created`, Stamp(since))
	if err != nil {
		return nil, fmt.Errorf("store: recent successes: %w", err)
	}
	defer rows.Close()
	out := map[int64][]time.Time{}
	for rows.Next() {
		var id int64
		var created string
		if err := rows.Scan(&id, &created); err != nil {
			return nil, err
		}
		out[id] = append(out[id], ParseStamp(created))
	}
	return out, rows.Err()
}
