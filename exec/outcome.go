package exec

import "strings"

// Outcome classifies a result in one word for counting (metrics): "success",
// "syntax_error" (the device rejected a line), "timeout", "connect_error",
// "host_key_error", "auth_error" or "error". It reads the messages this package
// writes, so the words stay right when a message changes here.
func Outcome(r Result) string {
	msg := r.ErrorMessage
	switch {
	case r.Success:
		return "success"
	case r.Syntax.Detected:
		return "syntax_error"
	case strings.HasPrefix(msg, "Timed out after"):
		return "timeout"
	case strings.Contains(msg, ErrAuth.Error()):
		return "auth_error"
	case strings.HasPrefix(msg, "exec: connect") && strings.Contains(msg, "host key"):
		return "host_key_error"
	case strings.HasPrefix(msg, "exec: connect"):
		return "connect_error"
	}
	return "error"
}
