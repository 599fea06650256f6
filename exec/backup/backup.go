// Package backup says, per driver, how a device's running configuration is read
// and kept: the command that prints it, the line it ends with, the lines that change
// on every read (a clock, an uptime, NTP drift) and so are not a change, and the
// secrets that are masked wherever the configuration is shown. Like the drivers, the
// platforms are data: a row of the profiles table each.
package backup

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Profile is how one platform's configuration is read and kept.
type Profile struct {
	// Command prints the running configuration; "" when the driver has none (a
	// platform must then name one).
	Command string
	// End matches the configuration's last non-empty line ("end", "return"): a read
	// without it was cut short. nil where the platform prints no end marker.
	End *regexp.Regexp
	// Ignore matches lines that change on every read without the configuration
	// changing; they are left out of what is kept and compared.
	Ignore []*regexp.Regexp
	// Secrets match a line's secret: the text of the last group is masked.
	Secrets []*regexp.Regexp
}

// Mask replaces a secret in what is shown.
const Mask = "<secret hidden>"

func rx(patterns ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		out[i] = regexp.MustCompile(p)
	}
	return out
}

// ciscoIgnore are the lines IOS-style CLIs print that change without a change of
// configuration: the banner above it, its size, its time stamps, NTP's drift.
var ciscoIgnore = rx(`^Building configuration`, `^Current configuration\s*:`, `^! Last configuration change at `,
	`^! NVRAM config last updated at `, `^! No configuration change since last restart`, `^ntp clock-period `,
	`^!Time: `, `^!Running configuration last done at: `, `^!Command: show running-config`)

// commonSecrets are the secrets most CLIs write the same way: passwords and
// secrets (with an optional encryption type), keys of AAA servers and routing
// protocols, SNMP communities, pre-shared keys, Junos' and Huawei's cipher
// texts, RouterOS' key=value pairs.
var commonSecrets = rx(
	`(?i)^(\s*(?:enable\s+)?(?:secret|password)(?:\s+(?:\d|level \d+))?(?:\s+(?:sha\d+|md5))?\s+)(\S+)`,
	`(?i)^(\s*username\s+\S+.*?\s(?:secret|password)(?:\s+\d+)?(?:\s+(?:sha\d+|md5))?\s+)(\S+)`,
	`(?i)^(\s*snmp-server\s+community\s+)(\S+)`,
	`(?i)^(\s*snmp-server\s+user\s+.*?\s(?:auth|priv)\s+\S+\s+)(\S+)`,
	`(?i)^(\s*(?:tacacs|radius)(?:-server)?\s.*?\skey(?:\s+\d+)?\s+)(\S+)`,
	`(?i)^(\s*key-string(?:\s+\d+)?\s+)(\S+)`,
	`(?i)^(\s*ip\s+ospf\s+(?:authentication|message-digest)-key.*?\s(?:md5\s+\d+\s+)?)(\S+)$`,
	`(?i)^(\s*neighbor\s+\S+\s+password(?:\s+\d+)?\s+)(\S+)`,
	`(?i)(\bpre-shared-key\s+(?:ascii-text\s+|\d\s+)?)(\S+)`,
	`(?i)^(\s*(?:encrypted-password|authentication-key|secret)\s+)("[^"]*"|\S+)`,
	`(?i)(\s(?:cipher|irreversible-cipher)\s+)(\S+)`,
	`(?i)^(\s*set\s+(?:password|passwd|psksecret|secret|key|passphrase)\s+)(ENC\s+\S+|\S+)`,
	`(?i)(\s(?:password|secret|authentication-key|wpa2-pre-shared-key)=)(\S+)`,
)

var (
	endLine    = regexp.MustCompile(`^end$`)
	returnLine = regexp.MustCompile(`^return$`)
)

// profiles holds a row per driver; a driver without one reads as generic's.
var profiles = map[string]Profile{
	"cisco_ios":   {Command: "show running-config", End: endLine, Ignore: ciscoIgnore},
	"cisco_nxos":  {Command: "show running-config", Ignore: ciscoIgnore},
	"cisco_iosxr": {Command: "show running-config", End: endLine, Ignore: rx(`^Building configuration`, `^!! Last configuration change at `, `^!! IOS XR Configuration `, `^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} +\d+ \d\d:\d\d:\d\d`)},
	"arista_eos":  {Command: "show running-config", End: endLine, Ignore: ciscoIgnore},
	"juniper_junos": {Command: "show configuration", End: regexp.MustCompile(`^\}$`),
		Ignore: rx(`^## Last commit: `, `^## Last changed: `)},
	"cisco_asa": {Command: "show running-config", End: regexp.MustCompile(`^: end$`),
		Ignore: rx(`^: Saved`, `^: Written by `, `^Cryptochecksum:`, `^: Serial Number:`, `^: Hardware:`)},
	"hp_procurve":       {Command: "show running-config", Ignore: rx(`^Running configuration:`, `^; .* Configuration Editor; Created on release`)},
	"aruba_aoscx":       {Command: "show running-config", Ignore: rx(`^Current configuration:`, `^!Version `)},
	"dell_os10":         {Command: "show running-configuration", End: endLine, Ignore: ciscoIgnore},
	"brocade_fastiron":  {Command: "show running-config", End: endLine, Ignore: ciscoIgnore},
	"huawei_vrp":        {Command: "display current-configuration", End: returnLine, Ignore: rx(`^!Software Version `, `^!Last configuration was (updated|saved) at `, `^!Time:`)},
	"extreme_exos":      {Command: "show configuration", Ignore: rx(`^# Module devmgr configuration\.$`, `^# ?Time:`)},
	"fortinet":          {Command: "show full-configuration", End: endLine, Ignore: rx(`^#conf_file_ver=`, `^#buildno=`, `^#global_vdom=`)},
	"paloalto_panos":    {Command: "show config running"},
	"mikrotik_routeros": {Command: "/export", Ignore: rx(`^# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d by RouterOS`, `^# \w{3}/\d\d/\d{4} \d\d:\d\d:\d\d by RouterOS`, `^# software id = `)},
	"linux":             {},
	"generic":           {Command: "show running-config", Ignore: ciscoIgnore},
}

// For is the profile of a driver (generic's for a driver it does not know), with a
// platform's own command when it names one and its ignore rules added.
func For(driver, command string, ignore []*regexp.Regexp) Profile {
	p, ok := profiles[driver]
	if !ok {
		p = profiles["generic"]
	}
	if command = strings.TrimSpace(command); command != "" {
		p.Command = command
	}
	p.Ignore = append(append([]*regexp.Regexp(nil), p.Ignore...), ignore...)
	p.Secrets = commonSecrets
	return p
}

// Drivers lists the drivers with a row, for the tests that hold every driver to one.
func Drivers() []string {
	out := make([]string, 0, len(profiles))
	for d := range profiles {
		out = append(out, d)
	}
	return out
}

// ParseIgnore reads a platform's own ignore rules: one regular expression (Go
// syntax) a line, blank lines skipped. The error names the line that does not
// compile.
func ParseIgnore(text string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// Normalize is a read as it is kept and compared: line ends made "\n", spaces at the
// ends of lines and blank lines at both ends dropped, and the lines the profile
// ignores left out.
func (p Profile) Normalize(raw string) string {
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	var b strings.Builder
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if p.ignored(line) {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return strings.Trim(b.String(), "\n") + "\n"
}

func (p Profile) ignored(line string) bool {
	for _, re := range p.Ignore {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

// ErrNoEnd is the reason of a read without its end marker.
var ErrNoEnd = errors.New("the configuration's end marker is missing: the read was cut short")

// Check tells whether a normalized read is whole: its last line is the end marker.
func (p Profile) Check(text string) error {
	if p.End == nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if !p.End.MatchString(strings.TrimSpace(lines[len(lines)-1])) {
		return fmt.Errorf("%w (expected a last line matching %s)", ErrNoEnd, p.End)
	}
	return nil
}

// MaskSecrets is text with every secret the profile knows replaced by Mask, and how
// many it replaced.
func (p Profile) MaskSecrets(text string) (string, int) {
	n := 0
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		for _, re := range p.Secrets {
			line = re.ReplaceAllStringFunc(line, func(m string) string {
				sub := re.FindStringSubmatchIndex(m)
				last := len(sub)/2 - 1
				if last < 1 || sub[2*last] < 0 || m[sub[2*last]:sub[2*last+1]] == Mask {
					return m
				}
				n++
				return m[:sub[2*last]] + Mask + m[sub[2*last+1]:]
			})
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n"), n
}

// Lines counts a normalized configuration's lines.
func Lines(text string) int { return strings.Count(strings.TrimRight(text, "\n"), "\n") + 1 }
