package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ?q= on the command logs: a log matches when its command, device or user name holds q
// (ignoring ASCII case), or when each word of q (a run with a letter or a digit) is, as
// a phrase of its own words, in its output, error message or notes. The words are found
// through a full-text index: on SQLite command_log_words (FTS5, kept by triggers), on
// PostgreSQL a log's column words (GIN, pgschema/0006); the names
// through the few distinct names (command_log_names), whose logs the name indexes find.
// On SQLite the search is one condition in three forms: a set of ids for SQLite to
// start from (a list with other conditions), its parts ORed (the whole list), and a
// test of each log along a walk; PostgreSQL's planner takes its one form (logSearchPG)
// each way. Its count is kept on SQLite (searchCounts); on PostgreSQL, whose writers
// commit side by side, a log may appear below the newest id a count covered, so
// "the logs after it" would miss it: the count is read each time.

// logSearchSet is ?q= as one set of logs: the ids of the matching names' logs (each
// found through its name's index) and of the word index's matches, which SQLite makes
// first and then tests each log of the list against. It is CommandLogs.TextSearch. (As
// an OR of its parts on each log, a list confined to some devices read every log of
// theirs to test its names: 2.2 s of CPU for 4,887 matches among a site's million logs.)
func logSearchSet(q string) Expr {
	var sets []string
	var args []any
	for kind, col := range logNameColumns {
		sets = append(sets, `SELECT id FROM command_logs WHERE `+col+` IN (`+namesSQL+`)`)
		args = append(args, kind, foldASCII(q))
	}
	if words, ok := logWords(q); ok {
		sets = append(sets, `SELECT rowid FROM command_log_words WHERE command_log_words MATCH ?`)
		args = append(args, words)
	}
	return Expr{SQL: `t.id IN (` + strings.Join(sets, " UNION ALL ") + `)`, Args: args}
}

// logSearchAny is ?q= for a list with no other condition: its parts ORed on each log,
// which SQLite reads each from its own index (the names' logs, the word index's
// matches) and joins, rather than seeking every log of the set.
func logSearchAny(q string) Expr {
	ors := logNamesHold(q)
	if words, ok := logWords(q); ok {
		ors = append(ors, Expr{SQL: `t.id IN (SELECT rowid FROM command_log_words WHERE command_log_words MATCH ?)`, Args: []any{words}})
	}
	return Or(ors...)
}

// logSearchRow is ?q= as a test of each log t: the word index sought at its id.
func logSearchRow(q string) Expr {
	ors := logNamesHold(q)
	if words, ok := logWords(q); ok {
		ors = append(ors, Expr{SQL: `EXISTS (SELECT 1 FROM command_log_words w WHERE w.command_log_words MATCH ? AND w.rowid = t.id)`,
			Args: []any{words}})
	}
	return Or(ors...)
}

// logNamesHold are the conditions that a name of log t (command, device, user) holds q.
func logNamesHold(q string) []Expr {
	var ors []Expr
	for kind, col := range logNameColumns {
		ors = append(ors, Expr{SQL: `t.` + col + ` IN (` + namesSQL + `)`, Args: []any{kind, foldASCII(q)}})
	}
	return ors
}

// logSearch is ?q= in the store's dialect: CommandLogs.TextSearch.
func (db *DB) logSearch(ctx context.Context, q string) (Expr, error) {
	if db.pg {
		return logSearchPG(ctx, db.reader(ctx), q)
	}
	return logSearchSet(q), nil
}

// logSearchPG is ?q= on PostgreSQL: a name holds q, or the log's words (the column
// words, pgschema/0006) hold every word of q's words, and each of q's words that is
// more than one (17.9.4a) is, as a phrase, in its output, error message or notes
// (log_phrase). A plain word (ASCII letters and digits) is its own test: the words hold
// it exactly when one of the three does. The names that hold q are read first and given
// as values: the planner then knows how many logs they hold (a subquery's it guesses at,
// and scans every log) and ORs the names' indexes with the words' index, or tests each
// log along an ordering's index.
func logSearchPG(ctx context.Context, rq querier, q string) (Expr, error) {
	names := make([][]string, len(logNameColumns))
	rows, err := rq.QueryContext(ctx, `SELECT kind, name FROM command_log_names WHERE instr(lower(name), ?) > 0`, foldASCII(q))
	if err != nil {
		return Expr{}, fmt.Errorf("store: search names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind int
		var name string
		if err := rows.Scan(&kind, &name); err != nil {
			return Expr{}, fmt.Errorf("store: search names: %w", err)
		}
		if kind >= 0 && kind < len(names) {
			names[kind] = append(names[kind], name)
		}
	}
	if err := rows.Err(); err != nil {
		return Expr{}, fmt.Errorf("store: search names: %w", err)
	}
	var ors []Expr
	for kind, col := range logNameColumns {
		if len(names[kind]) > 0 {
			ors = append(ors, Expr{SQL: `t.` + col + ` = ANY (?)`, Args: []any{names[kind]}})
		}
	}
	if words := logWordList(q); len(words) > 0 {
		and := []Expr{{SQL: `t.words @> ?`, Args: []any{logWordSet(strings.Join(words, " "))}}}
		for _, w := range words {
			if !plainWord(w) {
				and = append(and, Expr{SQL: `(t.output ~* log_phrase(?) OR t.error_message ~* log_phrase(?) OR t.notes ~* log_phrase(?))`,
					Args: []any{w, w, w}})
			}
		}
		ors = append(ors, And(and...))
	}
	return Or(ors...), nil
}

// plainWord reports whether w is one word on either store: ASCII letters and digits,
// no longer than a log's words keep (logWordMost).
func plainWord(w string) bool {
	return len(w) <= logWordMost && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// logWordMost is the longest word, in characters, a log's words keep (as
// pgschema/0006's log_words).
const logWordMost = 200

// logWordSet is the words of the texts, as pgschema/0006's log_words makes them: each
// run of letters and digits, in lower case, once, those longer than logWordMost left
// out; never nil (an empty set is the column's '{}', not NULL).
func logWordSet(texts ...string) []string {
	seen := map[string]bool{} // as written and in lower case: a word met again costs a lookup
	words := []string{}
	add := func(w string) {
		if seen[w] {
			return
		}
		seen[w] = true
		if lw := strings.ToLower(w); lw == w || !seen[lw] {
			seen[lw] = true
			if utf8.RuneCountInString(lw) <= logWordMost {
				words = append(words, lw)
			}
		}
	}
	for _, text := range texts {
		start := -1
		for i, r := range text {
			letter := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
				r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
			switch {
			case letter && start < 0:
				start = i
			case !letter && start >= 0:
				add(text[start:i])
				start = -1
			}
		}
		if start >= 0 {
			add(text[start:])
		}
	}
	return words
}

// namesSQL is the names of one kind that hold a text (both folded to ASCII lower case).
const namesSQL = `SELECT name FROM command_log_names WHERE kind = ? AND instr(lower(name), ?) > 0`

// logNameColumns are the log's name columns by their kind in command_log_names.
var logNameColumns = []string{"command_name", "device_name", "username"}

// logWordList are q's words as a search takes them: its runs between spaces that hold
// a letter or a digit.
func logWordList(q string) []string {
	var words []string
	for _, w := range strings.Fields(q) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			words = append(words, w)
		}
	}
	return words
}

// logWords is the FTS5 word index's query of q's words: each word a quoted phrase (its
// text is never read as query syntax), all of them required; false when q has no word.
func logWords(q string) (string, bool) {
	words := logWordList(q)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(words, " "), len(words) > 0
}

// foldASCII is s with its ASCII letters in lower case, as SQL's lower() folds them.
func foldASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// searchCountsMost bounds the counts kept.
const searchCountsMost = 256

// searchCounts keeps the counts of searches: a count over a word most logs hold reads
// one entry of the word index for each, and a page of it needs the count each time. A
// count is kept with the generation (which moves when a log is deleted or changed, or
// anything a condition reads through a relation) and the newest log it covers; while
// the generation is the same, only logs were added, and those after the newest are
// counted and added.
type searchCounts struct {
	mu sync.Mutex
	m  map[string]searchCount
}

type searchCount struct {
	gen, upto int64
	n         int
}

// searchCount is the number of logs that match q and where.
func (db *DB) searchCount(ctx context.Context, rq querier, q string, where Expr) (int, error) {
	key := fmt.Sprintf("%s\x00%s\x00%#v", q, where.SQL, where.Args)
	db.counts.mu.Lock()
	kept, ok := db.counts.m[key]
	db.counts.mu.Unlock()
	var c searchCount
	if ok {
		// Only the logs after the kept count, each tested, read in the same statement
		// as the generation, so that a change between the two cannot slip past it.
		after := And(Expr{SQL: "t.id > ?", Args: []any{kept.upto}}, where, logSearchRow(q))
		var n int
		if err := rq.QueryRowContext(ctx, `SELECT (SELECT n FROM generation), (SELECT coalesce(max(id), 0) FROM command_logs),
			(SELECT count(*) FROM command_logs t WHERE `+after.SQL+`)`, after.Args...).Scan(&c.gen, &c.upto, &n); err != nil {
			return 0, err
		}
		if c.gen == kept.gen {
			c.n = kept.n + n
			db.counts.keep(key, c)
			return c.n, nil
		}
	}
	search := logSearchSet(q)
	if where.SQL == True.SQL {
		search = logSearchAny(q)
	}
	e := And(search, where)
	count := `(SELECT count(*) FROM command_logs t WHERE ` + e.SQL + `)`
	if words, only := logWords(q); only && where.SQL == True.SQL && !namesHold(ctx, rq, q) {
		// Every log may be listed and no name holds q: the word index's own count,
		// without reading a log.
		count, e.Args = `(SELECT count(*) FROM command_log_words WHERE command_log_words MATCH ?)`, []any{words}
	}
	if err := rq.QueryRowContext(ctx, `SELECT (SELECT n FROM generation), (SELECT coalesce(max(id), 0) FROM command_logs), `+count,
		e.Args...).Scan(&c.gen, &c.upto, &c.n); err != nil {
		return 0, err
	}
	db.counts.keep(key, c)
	return c.n, nil
}

// keep files a count, emptying the counts when they reach their bound.
func (s *searchCounts) keep(key string, c searchCount) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= searchCountsMost {
		s.m = map[string]searchCount{}
	}
	s.m[key] = c
}

// namesHold reports whether a distinct name of some log holds q.
func namesHold(ctx context.Context, rq querier, q string) bool {
	var n int
	err := rq.QueryRowContext(ctx, `SELECT count(*) FROM command_log_names WHERE instr(lower(name), ?) > 0`, foldASCII(q)).Scan(&n)
	return err != nil || n > 0
}
