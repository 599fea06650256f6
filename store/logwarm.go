package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WarmSearchCounts takes the counts of the words that many logs hold and keeps them
// (countKept), before anyone searches for them: the first count of such a word reads
// each of its matches in the word index once, a few hundred milliseconds at millions of
// logs, and is kept afterwards. It picks the words from the newest logs: a word is
// warmed when, at its share of those, it would match warmFrom logs or more. Its counts
// are taken for every log and per device (for a viewer confined to some devices), as a
// search would take them, so they keep the same rules: a count read before a log was
// deleted is never stored. It returns the words whose counts are kept.
//
// It first reads the device of every log to hold (ReadLogDevices), or of the logs added
// since it last did when no log moved meanwhile. Logs deleted later drop the kept
// counts over them, except a prune's first searchTuning.pruneKeep logs, which are
// taken off the counts instead; running this again takes the dropped ones anew and
// adds only the logs since to the kept ones.
func (db *DB) WarmSearchCounts(ctx context.Context) ([]string, error) {
	// The per-device counts below, and a confined viewer's searches after, take each
	// match's device from those held (heldDevices).
	if err := db.followLogDevices(ctx); err != nil {
		return nil, err
	}
	t := db.search
	total, err := logCount(ctx, db.r, "")
	if err != nil || int64(total) < t.warmFrom {
		return nil, err
	}
	words, err := db.denseWords(ctx, total)
	if err != nil {
		return nil, err
	}
	var warmed []string
	for _, w := range words {
		q := searchKey(w)
		n, _, err := db.countKept(ctx, q, searchCountAll, nil, nil, false)
		if err != nil {
			return warmed, err
		}
		if int64(n) < t.keep {
			continue // a count this small is taken again cheaply, and is not kept
		}
		if _, _, err := db.countKept(ctx, q, searchCountDevices, nil, nil, false); err != nil {
			return warmed, err
		}
		warmed = append(warmed, q)
	}
	return warmed, nil
}

// denseWords are the words of the newest warmSample logs' outputs and error messages
// that would match warmFrom of total logs at their share of those, densest first, at
// most warmWords of them. Words are runs of letters and digits, as the word index
// splits text; the count of each is always the index's own.
func (db *DB) denseWords(ctx context.Context, total int) ([]string, error) {
	t := db.search
	rows, err := db.r.QueryContext(ctx, `SELECT output, error_message FROM command_logs ORDER BY id DESC LIMIT ?`, t.warmSample)
	if err != nil {
		return nil, fmt.Errorf("store: sample command_logs: %w", err)
	}
	defer rows.Close()
	logs := map[string]int{} // a word's key: how many sampled logs hold it
	spelt := map[string]string{}
	sampled := 0
	for rows.Next() {
		var output, message string
		if err := rows.Scan(&output, &message); err != nil {
			return nil, fmt.Errorf("store: sample command_logs: %w", err)
		}
		sampled++
		seen := map[string]bool{}
		for _, text := range []string{output, message} {
			for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				if utf8.RuneCountInString(w) < 3 || len(w) > 64 {
					continue // shorter is not searched through the indexes; longer is not a word anyone types
				}
				k := strings.ToLower(w)
				if !seen[k] {
					seen[k] = true
					logs[k]++
					if _, ok := spelt[k]; !ok {
						spelt[k] = w
					}
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sample command_logs: %w", err)
	}
	var dense []string
	for k, n := range logs {
		if int64(n)*int64(total) >= t.warmFrom*int64(sampled) {
			dense = append(dense, k)
		}
	}
	slices.SortFunc(dense, func(a, b string) int { return cmp.Or(logs[b]-logs[a], strings.Compare(a, b)) })
	if len(dense) > t.warmWords {
		dense = dense[:t.warmWords]
	}
	for i, k := range dense {
		dense[i] = spelt[k]
	}
	return dense, nil
}

// searchKey is q as a log search matches and keeps it: both indexes fold the case of
// ASCII letters, so q of ASCII alone is taken in lower case, and "Gi0" and "gi0" share
// one kept count. Other text is kept as it is (its folding is the tokenizer's).
func searchKey(q string) string {
	for i := 0; i < len(q); i++ {
		if q[i] >= utf8.RuneSelf {
			return q
		}
	}
	return strings.ToLower(q)
}
