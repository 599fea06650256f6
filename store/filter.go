package store

import (
	"strconv"
	"strings"
)

// FilterExpr is the condition of one list filter parameter: key is its name, with a
// lookup after "__" when the filter takes lookups ("name__ic"); several values OR
// together. Errors are the client's message for that parameter.
func (m *Model) FilterExpr(key string, raw []string) (Expr, error) {
	f, lookup, ok := m.filterNamed(key)
	if !ok {
		return Expr{}, Problem("Unknown filter parameter.")
	}
	path, _ := ParseLookup(f.Path)
	if f.SQL == nil {
		k, err := m.KindOf(path)
		if err != nil {
			return Expr{}, Problem("Unknown filter parameter.")
		}
		f.Kind = k
	}
	var vals []string
	for _, v := range raw {
		if v != "" || f.Kind == KindString {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return True, nil
	}
	if f.SQL != nil {
		return f.SQL(vals)
	}
	anys := make([]any, 0, len(vals))
	for _, v := range vals {
		if lookup == "isnull" || lookup == "empty" {
			if _, err := ParseBool(v); err != nil {
				return Expr{}, Problem("Must be a valid boolean.")
			}
			anys = append(anys, v)
			continue
		}
		if err := checkKind(f.Kind, v); err != nil {
			return Expr{}, err
		}
		if v == "null" && f.Kind == KindInt {
			anys = append(anys, nil)
			continue
		}
		anys = append(anys, v)
	}
	e, err := m.Compile(Cond{Path: path, Lookup: lookup, Values: anys})
	if err != nil {
		return Expr{}, Problem("Invalid filter value.")
	}
	return e, nil
}

// filterNamed finds the filter a parameter names and its lookup ("in" when none).
func (m *Model) filterNamed(key string) (Filter, string, bool) {
	filters := m.Filterable()
	if f, ok := filters[key]; ok {
		return f, "in", true
	}
	i := strings.LastIndex(key, "__")
	if i <= 0 {
		return Filter{}, "", false
	}
	base, lookup := key[:i], key[i+2:]
	f, ok := filters[base]
	if !ok || !f.Lookups || !Lookups[lookup] || lookup == "exact" {
		return Filter{}, "", false
	}
	return f, lookup, true
}

// checkKind checks a filter value against the field's kind, in the client's words.
func checkKind(k Kind, v string) error {
	switch k {
	case KindInt:
		if v == "null" {
			return nil
		}
		if _, ok := ParseInt(v); !ok {
			return problemf("%q is not a valid integer.", v)
		}
	case KindBool:
		if _, err := ParseBool(v); err != nil {
			return problemf("%q is not a valid boolean (use true/false/1/0).", v)
		}
	case KindTime:
		if _, err := ParseTime(v); err != nil {
			return problemf("%q is not a valid date/time (use YYYY-MM-DD or RFC 3339).", v)
		}
	case KindFloat:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return problemf("%q is not a valid number.", v)
		}
	}
	return nil
}

// ParseInt reads an integer a query parameter carries, in its one decimal spelling: no
// "+", no leading zeros, no spaces, no "-0". Anything else is not a valid integer, so
// that "01" or "+1" never silently mean 1.
func ParseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// intArgs parses the values of an integer filter with SQL of its own.
func intArgs(vals []string) ([]any, error) {
	out := make([]any, 0, len(vals))
	for _, v := range vals {
		n, ok := ParseInt(v)
		if !ok {
			return nil, problemf("%q is not a valid integer.", v)
		}
		out = append(out, n)
	}
	return out, nil
}

// boolFilter is a filter on one condition: true selects the rows meeting it, false the
// others.
func boolFilter(cond string) func(vals []string) (Expr, error) {
	return func(vals []string) (Expr, error) {
		b, err := ParseBool(vals[0])
		if err != nil {
			return Expr{}, problemf("%q is not a valid boolean (use true/false/1/0).", vals[0])
		}
		if !b {
			return Not(Expr{SQL: cond}), nil
		}
		return Expr{SQL: cond}, nil
	}
}
