// Package exec runs named commands on network devices over SSH.
//
// Platforms are data: every driver is one row of the table in drivers.go
// (prompt patterns, enable, paging and width commands, config mode entry and
// exit, error strings). Shell drivers use a PTY and an interactive shell; the
// linux driver opens one exec channel per command. Every read has a deadline
// taken from the context.
//
// Output is what the device sent, minus the echoed command, the prompt and
// the pager: nothing in it is rewritten. Secrets stay out of errors and logs
// by construction: no message FieldKit builds ever interpolates a credential,
// and a secret is only ever written to the device at its login or enable
// prompt, an exchange that is never part of any Output.
package exec

import (
	"context"
	"log/slog"
	"time"
)

// DefaultMaxOutputBytes caps the output kept per command when
// Options.MaxOutputBytes is zero.
const DefaultMaxOutputBytes = 16 << 20

// Credentials are the login secrets of a credential set. They never appear in
// logs: LogValue and String both return "REDACTED".
type Credentials struct {
	Username     string
	Password     string
	EnableSecret string
	// EnableMode says what is typed when enable asks for a password.
	EnableMode EnableMode
	PrivateKey []byte // PEM or OpenSSH format, unencrypted
}

// EnableMode says what answers the enable password prompt.
type EnableMode string

// Enable modes. The zero value types the enable secret when one is set and
// the login password otherwise.
const (
	EnableModeAuto     EnableMode = ""
	EnableModeSecret   EnableMode = "secret"   // the enable secret, even when empty
	EnableModePassword EnableMode = "password" // the login password
	EnableModeNone     EnableMode = "none"     // an empty line: the device asks, but has no enable password
)

// EnableModes lists the valid enable modes, EnableModeAuto first.
func EnableModes() []EnableMode {
	return []EnableMode{EnableModeAuto, EnableModeSecret, EnableModePassword, EnableModeNone}
}

// enablePassword is what to type at the enable password prompt.
func (c Credentials) enablePassword() string {
	switch c.EnableMode {
	case EnableModeSecret:
		return c.EnableSecret
	case EnableModePassword:
		return c.Password
	case EnableModeNone:
		return ""
	}
	if c.EnableSecret != "" {
		return c.EnableSecret
	}
	return c.Password
}

// LogValue implements slog.LogValuer so that a logged Credentials value
// shows no secret.
func (Credentials) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// String implements fmt.Stringer for the same reason as LogValue.
func (Credentials) String() string { return "REDACTED" }

// GoString keeps %#v from printing the fields.
func (Credentials) GoString() string { return "REDACTED" }

// HostKeyPolicy says how an unknown or changed device host key is handled.
type HostKeyPolicy string

// Host key policies: TOFU stores the first key seen, strict requires a key
// already stored, insecure accepts any key (for labs only).
const (
	HostKeyTOFU     HostKeyPolicy = "tofu"
	HostKeyStrict   HostKeyPolicy = "strict"
	HostKeyInsecure HostKeyPolicy = "insecure"
)

// HostKeyStore holds the known host key of each device as an authorized_keys
// line. The store layer implements it; KnownHostKey returns "" when none.
type HostKeyStore interface {
	KnownHostKey(ctx context.Context, deviceID int64) (string, error)
	SaveHostKey(ctx context.Context, deviceID int64, key string) error
}

// Target is the device to connect to, with the overrides its platform or
// the device itself sets.
type Target struct {
	DeviceID         int64
	Name             string
	Host             string
	Port             int    // 22 when zero
	Driver           string // a name from Drivers() ("generic" when empty); see DriverFor
	LegacyAlgorithms bool   // also offer SHA-1 key exchange, CBC ciphers, ssh-rsa

	// ConnectTimeout, when set, bounds opening the session on its own: TCP,
	// SSH login, first prompt, enable and setup. CommandTimeout, when set,
	// bounds each command on its own. Either replaces Options.Timeout (or a
	// batch step's timeout) for its part of the work; ctx still bounds all.
	ConnectTimeout time.Duration
	CommandTimeout time.Duration
	// PromptPattern, when set, is a regular expression every prompt of the
	// device matches as a whole line, replacing the driver's (for a host
	// name with characters the driver does not expect, or a custom prompt).
	PromptPattern string
}

// Options tune a session. The zero value is usable except for HostKeys,
// which TOFU and strict policies need.
type Options struct {
	MaxOutputBytes int           // per command; DefaultMaxOutputBytes when zero
	HostKeyPolicy  HostKeyPolicy // HostKeyTOFU when empty
	HostKeys       HostKeyStore
	Logger         *slog.Logger // slog.Default() when nil
	// Timeout bounds a whole Execute (connect, login, commands, logout) and
	// gives the N of "Timed out after N s". Zero leaves the bound to ctx.
	Timeout time.Duration
}

// Command is one command to run. Text may hold several lines; for a config
// command each line is sent in config mode.
type Command struct {
	Type string // "show" or "config"
	Text string
	// Output, when set, is called with the command's output as it arrives, whole lines
	// at a time (it must not block, and may be called from the SSH library's
	// goroutines, one call at a time). It is the device's text with terminal escapes,
	// carriage returns and pager prompts applied and the echo of each line sent left
	// out; the Result's Output is the final word: cleaned once more as a whole (the
	// closing prompt removed, a config change's full transcript, capped at
	// MaxOutputBytes). A line the device has not ended yet arrives when it ends.
	Output func(text string)
}

// Command types.
const (
	TypeShow   = "show"
	TypeConfig = "config"
)

// SyntaxError describes a vendor error string found in a command's output.
type SyntaxError struct {
	Detected bool   `json:"detected"`
	Type     string `json:"type,omitempty"`
	Vendor   string `json:"vendor,omitempty"`
	Line     string `json:"line,omitempty"`
	Guidance string `json:"guidance,omitempty"`
	// Input is the configuration line the device rejected, if any.
	Input string `json:"input,omitempty"`
}

// Syntax error types.
const (
	InvalidInput      = "invalid_input"
	IncompleteCommand = "incomplete_command"
	AmbiguousCommand  = "ambiguous_command"
	UnknownCommand    = "unknown_command"
	PermissionDenied  = "permission_denied"
	ConfigRejected    = "config_rejected"
)

// Result is the outcome of one command. ErrorMessage is the technical message (for
// logs and tests); a failure other than a syntax error also has its Failure, whose
// Message is the words for a person.
type Result struct {
	Output       string
	Success      bool
	ErrorMessage string
	Failure      *Failure
	Syntax       SyntaxError
	Truncated    bool
	Duration     time.Duration
}

func (o Options) maxOutput() int {
	if o.MaxOutputBytes > 0 {
		return o.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

func (o Options) policy() HostKeyPolicy {
	if o.HostKeyPolicy == "" {
		return HostKeyTOFU
	}
	return o.HostKeyPolicy
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}
