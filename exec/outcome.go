package exec

// Outcome classifies a result in one word for counting (metrics): "success",
// "syntax_error" (the device rejected a line), "timeout", "connect_error",
// "host_key_error", "auth_error", "cancelled" or "error".
func Outcome(r Result) string {
	switch {
	case r.Success:
		return "success"
	case r.Syntax.Detected:
		return "syntax_error"
	case r.Failure == nil:
		return "error"
	}
	switch r.Failure.Reason {
	case ReasonTimeout, ReasonBusy:
		return "timeout"
	case ReasonAuth:
		return "auth_error"
	case ReasonHostKey:
		return "host_key_error"
	case ReasonCancelled:
		return "cancelled"
	}
	if r.Failure.Phase == PhaseConnect {
		return "connect_error"
	}
	return "error"
}
