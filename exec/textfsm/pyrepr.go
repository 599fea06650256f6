package textfsm

import (
	"fmt"
	"strings"
	"unicode"
)

// clitable stores every value of a record with Python's str(): a List
// becomes a list of str() of its items, so an item Python holds as None
// reads "None" and a dict of named groups reads as its repr. ntc's
// parse_output returns those strings, and so does FieldKit.

// pyStrValue converts a record value as texttable's _ToStr does.
func pyStrValue(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]string, len(v))
		for i, item := range v {
			out[i] = pyStr(item)
		}
		return out
	case string:
		return v
	}
	return pyStr(v)
}

func pyStr(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// pyDict is Python's repr() of a dict of strings and Nones, keys in order.
func pyDict(keys []string, values []any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyRepr(k))
		b.WriteString(": ")
		if s, ok := values[i].(string); ok {
			b.WriteString(pyRepr(s))
		} else {
			b.WriteString("None")
		}
	}
	b.WriteByte('}')
	return b.String()
}

// pyRepr is Python's repr() of a str: single quotes unless the text holds
// a single quote and no double quote, and escapes for the quote, the
// backslash and every character Python does not print.
func pyRepr(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || isPyPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// isPyPrintable is Python's str.isprintable for one character: not in the
// categories Cc, Cf, Cs, Co, Cn, Zl, Zp or Zs.
func isPyPrintable(r rune) bool {
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Zl, unicode.Zp, unicode.Zs) {
		return false
	}
	return unicode.Is(unicode.L, r) || unicode.Is(unicode.M, r) || unicode.Is(unicode.N, r) ||
		unicode.Is(unicode.P, r) || unicode.Is(unicode.S, r)
}
