package devsim

import (
	"strconv"
	"strings"
)

// vendor is one simulated platform, described as data: names, prompts,
// pager, error wording and command tables per CLI mode.
type vendor struct {
	name, hostname, banner string
	serverVersion          string
	pager                  string // "" = the vendor never pages
	ifNames                [4]string
	ifaces                 []Interface       // default interfaces when not ifNames-shaped
	abbrev                 map[string]string // long interface type -> short
	creatable              []string          // interface types "interface X" may create
	enable                 bool              // has an enable secret and a ">" mode
	errs                   errStyle
	cfgErrs                *errStyle // config-mode wording, when it differs (Junos)
	tables                 map[mode][]*command
	prompt                 func(s *session) string
	running                func(st *state) []string
	shell                  func(s *session) error
	exec                   func(s *session, cmd string) (stdout, stderr string, status int)

	// login runs after the banner, before the first prompt: a banner that
	// waits for a key, a license question, terminal detection.
	login func(s *session) error
	// modes names a config mode inside the prompt's parentheses; nil
	// names them the Cisco way.
	modes func(s *session) string
	// enableUser makes enable ask for a user name before the password;
	// enableTries is how often a wrong password is asked again (1 when
	// zero) and enableFail the lines printed then ("% Access denied").
	enableUser  bool
	enableTries int
	enableFail  []string
	// configBanner is printed on entering configuration mode.
	configBanner string
	// dispatch, when set, runs a line instead of the command tables (for
	// a grammar they do not fit, RouterOS's menu paths); quit ends the
	// session.
	dispatch func(s *session, line string) (out []string, quit bool)
	// repaint redraws the prompt and the line when it is entered.
	repaint bool
	// loginOptions lets the login name carry "+options" (RouterOS).
	loginOptions bool
	// pagerAt, when set, words the pager prompt after lines first to
	// last of the output (PAN-OS "lines 1-23").
	pagerAt func(first, last int) string
	// pagerErase is what erases the pager prompt after a key; empty
	// means backspaces over it.
	pagerErase string
	// isShow tells a command that shows something (faults that hit
	// output hit those only); nil means a first word of "show".
	isShow func(line string) bool
}

// vendors is filled by each vendor file's init.
var vendors = map[string]*vendor{}

func (v *vendor) runningConfig(st *state) []string { return v.running(st) }

// ciscoPrompt renders "host>", "host#", "host(config)#" and the sub-modes;
// sp is the trailing text after the sign (NX-OS adds a space).
func ciscoPrompt(s *session, sp string) string {
	host := s.hostname()
	if s.cli.mode == modeExec {
		if s.cli.priv {
			return host + "#" + sp
		}
		return host + ">" + sp
	}
	return host + "(" + s.d.v.modeName(s) + ")#" + sp
}

// modeName is the text inside the config prompt's parentheses. EOS names
// the interface and VLAN being configured, as the real switches do.
func (v *vendor) modeName(s *session) string {
	if v.modes != nil {
		return v.modes(s)
	}
	switch s.cli.mode {
	case modeIf:
		if v.name == "arista_eos" {
			return "config-if-" + shortIf(s.cli.iface, v.abbrev)
		}
		return "config-if"
	case modeVlan:
		if v.name == "arista_eos" {
			return "config-vlan-" + itoa(s.cli.vlan)
		}
		return "config-vlan"
	}
	return "config"
}

// hostname is the name in the prompt: the committed one, or on candidate
// platforms still the committed one until commit.
func (s *session) hostname() string {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	return s.d.st.hostname
}

// edit runs f on the configuration a session changes: the running one on
// Cisco-like platforms, the candidate on commit-based ones.
func (s *session) edit(f func(st *state)) {
	if s.cli.cand != nil {
		f(s.cli.cand)
		return
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	f(s.d.st)
}

// view returns a copy of the running configuration for show commands.
func (s *session) view() *state {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	return s.d.st.clone()
}

// enableLocked reports whether logins land unprivileged, behind "enable".
func (d *Device) enableLocked() bool {
	return d.v.enable && (d.cfg.EnableSecret != "" || d.cfg.EnableEmpty)
}

// motd is the banner printed after login, with terminal line endings.
func (s *session) motd() string {
	b := strings.TrimRight(s.d.cfg.Banner, "\r\n")
	if b == "" {
		return ""
	}
	b = strings.ReplaceAll(strings.ReplaceAll(b, "\r\n", "\n"), "\n", "\r\n")
	return "\r\n" + b + "\r\n\r\n"
}

// cliShell is the interactive loop shared by every platform with a
// prompt: print the banner and prompt, read a line, answer, repeat.
func cliShell(s *session) error {
	v := s.d.v
	s.cli = cliState{pageLen: 24, width: 80, priv: !s.d.enableLocked()}
	if v.name == "linux" || v.name == "generic" {
		s.cli.pageLen = 0
	}
	_, lat := s.d.snapshot()
	if !sleep(s.ctx, lat) {
		return errClosed
	}
	if v.login != nil {
		if err := s.write(s.motd()); err != nil {
			return err
		}
		if err := v.login(s); err != nil {
			return err
		}
	} else if err := s.write(s.motd()); err != nil {
		return err
	}
	if err := s.write(s.prompt()); err != nil {
		return err
	}
	for {
		line, err := s.readLine(true)
		if err != nil {
			return nil
		}
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && line[0] >= ' ' {
			s.d.recordCommand(line)
			if fault, _ := s.d.snapshot(); fault == FaultSilence {
				return s.hang()
			}
		}
		out, quit := s.dispatch(line)
		if s.cli.dead {
			return nil
		}
		if s.d.takeHangUp(line) {
			s.conn.Close()
			return nil
		}
		if trimmed != "" {
			s.cli.lines++
		}
		show := isShow(trimmed)
		if v.isShow != nil {
			show = v.isShow(trimmed)
		}
		if err := s.respond(out, show); err != nil {
			return err
		}
		if quit {
			return nil
		}
		if err := s.write(s.prompt()); err != nil {
			return err
		}
	}
}

func isShow(line string) bool {
	w, _, _ := strings.Cut(strings.ToLower(line), " ")
	return len(w) >= 2 && strings.HasPrefix("show", w)
}

// quitLine marks the output of a command that ends the session.
const quitLine = "\x00quit"

// dispatch runs one line in the current mode. Cisco-like sub-modes fall
// back to the global config table (typing "interface X" inside config-if
// moves to that interface), and Ctrl-Z leaves config mode.
func (s *session) dispatch(line string) ([]string, bool) {
	v := s.d.v
	if v.dispatch != nil {
		return v.dispatch(s, line)
	}
	switch line {
	case string([]byte{ctrlC}):
		return nil, false
	case string([]byte{ctrlZ}):
		if s.cli.mode != modeExec && v.tables[modeIf] != nil {
			s.cli.mode = modeExec
		}
		return nil, false
	}
	table := v.tables[s.cli.mode]
	if s.cli.mode == modeIf || s.cli.mode == modeVlan {
		body, _ := splitPipe(line)
		toks := tokenize(body)
		if len(toks) > 0 {
			if _, _, err := match(body, toks, table); err != nil {
				if _, _, err2 := match(body, toks, v.tables[modeConfig]); err2 == nil {
					s.cli.mode = modeConfig
					table = v.tables[modeConfig]
				}
			}
		}
	}
	es := &v.errs
	if s.cli.mode != modeExec && v.cfgErrs != nil {
		es = v.cfgErrs
	}
	out := s.run(es, table, line)
	if n := len(out); n > 0 && out[n-1] == quitLine {
		return out[:n-1], true
	}
	return out, false
}

func itoa(n int) string { return strconv.Itoa(n) }
