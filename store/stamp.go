package store

import "time"

// Times are stored as text in TimeFormat, and a page of logs reads and writes three
// per log: these read and write that one layout directly, and leave every other text
// and time to package time, so the answers are always time.Parse's and
// time.Format's (TestStampsAsPackageTime).

// Stamp formats t the way every time column stores it.
func Stamp(t time.Time) string { return string(AppendStamp(nil, t)) }

// AppendStamp appends t in UTC in TimeFormat, as t.UTC().AppendFormat would.
func AppendStamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, TimeFormat)
	}
	h, mi, s := t.Clock()
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	b = appendDigits(b, s, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1000, 6)
	return append(b, 'Z')
}

// appendDigits appends n, not negative, as width digits with leading zeros.
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	for range width {
		b = append(b, 0)
	}
	for i := len(b) - 1; i >= start; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}

// ParseStamp reads a stored time; an empty string is the zero time.
func ParseStamp(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, ok := parseStamp(s); ok {
		return t
	}
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		t, _ = time.Parse(time.RFC3339Nano, s)
	}
	return t.UTC()
}

// parseStamp reads a valid time in TimeFormat, and false for any other text.
func parseStamp(s string) (time.Time, bool) {
	if len(s) != len(TimeFormat) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
		s[16] != ':' || s[19] != '.' || s[26] != 'Z' {
		return time.Time{}, false
	}
	var v [7]int
	for i, f := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 26}} {
		for _, c := range []byte(s[f[0]:f[1]]) {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			v[i] = v[i]*10 + int(c-'0')
		}
	}
	y, mo, d, h, mi, sec, us := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, us*1000, time.UTC)
	if t.Day() != d {
		return time.Time{}, false // past the month's end: time.Date moved it on
	}
	return t, true
}
