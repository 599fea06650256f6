package exec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Host key errors, matched with errors.Is.
var (
	ErrHostKeyChanged = errors.New("host key changed")
	ErrHostKeyUnknown = errors.New("host key unknown")
)

// HostKeyError reports a device key that does not match the stored one, or
// an unknown key under the strict policy. Fingerprints are SHA256:... .
type HostKeyError struct {
	Name, Host    string
	Expected, Got string // Expected is empty for an unknown key
}

// Error implements error.
func (e *HostKeyError) Error() string {
	if e.Expected == "" {
		return fmt.Sprintf("host key for %s (%s) is not known and the policy is strict: got %s; an administrator must store the key first", e.Name, e.Host, e.Got)
	}
	return fmt.Sprintf("host key for %s (%s) changed: expected %s, got %s; an administrator must clear the stored key", e.Name, e.Host, e.Expected, e.Got)
}

// Is makes errors.Is(err, ErrHostKeyChanged / ErrHostKeyUnknown) work.
func (e *HostKeyError) Is(target error) bool {
	if e.Expected == "" {
		return target == ErrHostKeyUnknown
	}
	return target == ErrHostKeyChanged
}

// hostKeyCheck builds the callback for the handshake and the host key
// algorithms to offer: the known key's type first, so that a device with
// several keys presents the one we stored.
func hostKeyCheck(ctx context.Context, t Target, o Options) (ssh.HostKeyCallback, []string, error) {
	policy := o.policy()
	switch policy {
	case HostKeyInsecure:
		return func(string, net.Addr, ssh.PublicKey) error { return nil }, nil, nil
	case HostKeyTOFU, HostKeyStrict:
	default:
		return nil, nil, fmt.Errorf("unknown host key policy %q", policy)
	}
	if o.HostKeys == nil {
		return nil, nil, fmt.Errorf("host key policy %s needs a host key store", policy)
	}
	line, err := o.HostKeys.KnownHostKey(ctx, t.DeviceID)
	if err != nil {
		return nil, nil, fmt.Errorf("read known host key: %w", err)
	}
	if strings.TrimSpace(line) == "" {
		return firstUse(ctx, t, o, policy), nil, nil
	}
	known, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return nil, nil, fmt.Errorf("parse known host key: %w", err)
	}
	check := func(_ string, _ net.Addr, key ssh.PublicKey) error {
		if string(key.Marshal()) == string(known.Marshal()) {
			return nil
		}
		return &HostKeyError{Name: t.Name, Host: t.Host, Expected: ssh.FingerprintSHA256(known), Got: ssh.FingerprintSHA256(key)}
	}
	return check, algorithmsFor(known.Type(), t.LegacyAlgorithms), nil
}

// firstUse accepts and stores an unknown key (TOFU) or refuses it (strict).
func firstUse(ctx context.Context, t Target, o Options, policy HostKeyPolicy) ssh.HostKeyCallback {
	return func(_ string, _ net.Addr, key ssh.PublicKey) error {
		if policy == HostKeyStrict {
			return &HostKeyError{Name: t.Name, Host: t.Host, Got: ssh.FingerprintSHA256(key)}
		}
		line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
		if err := o.HostKeys.SaveHostKey(ctx, t.DeviceID, line); err != nil {
			return fmt.Errorf("save host key: %w", err)
		}
		o.logger().Info("exec: stored host key on first use", "device_id", t.DeviceID,
			"device", t.Name, "fingerprint", ssh.FingerprintSHA256(key))
		return nil
	}
}

// algorithmsFor lists the host key signature algorithms for a key type.
func algorithmsFor(keyType string, legacy bool) []string {
	if keyType != ssh.KeyAlgoRSA {
		return []string{keyType}
	}
	algos := []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	if legacy {
		algos = append(algos, ssh.KeyAlgoRSA)
	}
	return algos
}
