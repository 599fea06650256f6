package events

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"fieldkit/store"
)

// problemf is a client's message.
func problemf(format string, a ...any) error { return store.Problem(fmt.Sprintf(format, a...)) }

// Conditions is a NetBox condition set, compiled: one condition ({"attr", "value",
// "op", "negate"}) or {"and": [...]} / {"or": [...]} of conditions and sets, evaluated on
// an event's data (the object as the API shows it).
type Conditions struct {
	logic string // "and", "or", or "" for one condition
	sets  []*Conditions
	cond  *condition
}

type condition struct {
	attr   []string
	value  any
	op     string
	negate bool
	re     *regexp.Regexp
}

// opsByType are the operators each kind of value takes, as NetBox checks them.
var opsByType = map[string][]string{
	"string": {"eq", "contains", "regex"},
	"bool":   {"eq", "contains"},
	"number": {"eq", "gt", "gte", "lt", "lte", "contains"},
	"list":   {"eq", "in", "contains"},
	"null":   {"eq"},
}

// ParseConditions compiles a condition set; the error is the client's message.
func ParseConditions(raw json.RawMessage) (*Conditions, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, store.Problem("Conditions must be a JSON object.")
	}
	return parseSet(v)
}

func parseSet(v any) (*Conditions, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, problemf("A condition set must be an object, not %s.", jsonKind(v))
	}
	if len(m) == 1 {
		for k, list := range m {
			logic := strings.ToLower(k)
			if logic != "and" && logic != "or" {
				break
			}
			items, ok := list.([]any)
			if !ok {
				return nil, problemf("%q takes a list of conditions.", k)
			}
			c := &Conditions{logic: logic}
			for _, it := range items {
				sub, err := parseSet(it)
				if err != nil {
					return nil, err
				}
				c.sets = append(c.sets, sub)
			}
			return c, nil
		}
	}
	cond, err := parseCondition(m)
	if err != nil {
		return nil, err
	}
	return &Conditions{cond: cond}, nil
}

func parseCondition(m map[string]any) (*condition, error) {
	for k := range m {
		if !slices.Contains([]string{"attr", "value", "op", "negate"}, k) {
			return nil, problemf("Unknown key %q in a condition: give attr, value, op and negate.", k)
		}
	}
	attr, _ := m["attr"].(string)
	if attr == "" {
		return nil, store.Problem(`A condition needs "attr": the dotted path of a field of the event's data, e.g. "device.name".`)
	}
	value, ok := m["value"]
	if !ok {
		return nil, problemf("The condition on %s needs a value.", attr)
	}
	op := "eq"
	if o, ok := m["op"]; ok {
		if op, ok = o.(string); !ok {
			return nil, store.Problem("op must be a string.")
		}
	}
	negate := false
	if n, ok := m["negate"]; ok {
		if negate, ok = n.(bool); !ok {
			return nil, store.Problem("negate must be true or false.")
		}
	}
	kind := jsonKind(value)
	allowed, known := opsByType[kind]
	if !known {
		return nil, problemf("Unsupported value type for %s: %s.", attr, kind)
	}
	if !slices.Contains([]string{"eq", "gt", "gte", "lt", "lte", "in", "contains", "regex"}, op) {
		return nil, problemf("Unknown operator %q: use eq, gt, gte, lt, lte, in, contains or regex.", op)
	}
	if !slices.Contains(allowed, op) {
		return nil, problemf("Operator %s does not take a %s value (condition on %s).", op, kind, attr)
	}
	c := &condition{attr: strings.Split(attr, "."), value: value, op: op, negate: negate}
	if op == "regex" {
		// Python's re.match: anchored at the start only.
		re, err := regexp.Compile(`^(?:` + value.(string) + `)`)
		if err != nil {
			return nil, problemf("The regular expression of the condition on %s does not compile: %v.", attr, err)
		}
		c.re = re
	}
	return c, nil
}

// Match evaluates the conditions on data. A path that leads nowhere is no match (NetBox
// logs it and takes no action).
func (c *Conditions) Match(data map[string]any) bool {
	if c == nil {
		return true
	}
	if c.cond != nil {
		return c.cond.eval(data)
	}
	for _, s := range c.sets {
		ok := s.Match(data)
		if c.logic == "or" && ok {
			return true
		}
		if c.logic == "and" && !ok {
			return false
		}
	}
	return c.logic == "and"
}

func (c *condition) eval(data map[string]any) bool {
	v, ok := walk(data, c.attr)
	if !ok {
		return false
	}
	res, ok := c.compare(v)
	if !ok {
		return false
	}
	return res != c.negate
}

// walk follows a dotted path through objects; a list maps the rest of the path over its
// items (tags.slug is every tag's slug).
func walk(v any, path []string) (any, bool) {
	for i, key := range path {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			out := make([]any, 0, len(x))
			for _, it := range x {
				got, ok := walk(it, path[i:])
				if !ok {
					return nil, false
				}
				out = append(out, got)
			}
			return out, true
		default:
			return nil, false
		}
	}
	return v, true
}

// compare applies the operator; ok is false when the types cannot be compared.
func (c *condition) compare(v any) (bool, bool) {
	switch c.op {
	case "eq":
		return equal(v, c.value), true
	case "gt", "gte", "lt", "lte":
		a, ok1 := v.(float64)
		b, ok2 := c.value.(float64)
		if !ok1 || !ok2 {
			return false, false
		}
		switch c.op {
		case "gt":
			return a > b, true
		case "gte":
			return a >= b, true
		case "lt":
			return a < b, true
		}
		return a <= b, true
	case "in":
		list, _ := c.value.([]any)
		return slices.ContainsFunc(list, func(x any) bool { return equal(x, v) }), true
	case "contains":
		switch x := v.(type) {
		case string:
			s, ok := c.value.(string)
			return ok && strings.Contains(x, s), ok
		case []any:
			return slices.ContainsFunc(x, func(y any) bool { return equal(y, c.value) }), true
		case map[string]any:
			s, ok := c.value.(string)
			_, has := x[s]
			return ok && has, ok
		}
		return false, false
	case "regex":
		s, ok := v.(string)
		return ok && c.re.MatchString(s), ok
	}
	return false, false
}

func equal(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case float64:
		return "number"
	case []any:
		return "list"
	case nil:
		return "null"
	}
	return "object"
}
