package store

import ()

// MaxSessionName is the longest mock session name, in bytes.
const MaxSessionName = 128

// ErrBadSessionName is Open's answer for a name CheckSessionName refuses.
var ErrBadSessionName = sentinel(Invalid, "not a valid mock session name")

// CheckSessionName says why name cannot name a mock session, or nil. A name
// is "" (the default mock session) or 1 to MaxSessionName visible ASCII
// characters (! to ~). Names are saved in the state file as JSON strings;
// keeping them to ASCII means every name saved comes back byte for byte,
// where bytes that are not UTF-8 would all come back as the same U+FFFD.
func CheckSessionName(name string) error {
	if len(name) > MaxSessionName {
		return ErrBadSessionName.because("%v: it is %d bytes long; the limit is %d", ErrBadSessionName, len(name), MaxSessionName)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < '!' || c > '~' {
			return ErrBadSessionName.because("%v: byte %d is 0x%02x; use visible ASCII characters (! to ~) only", ErrBadSessionName, i, c)
		}
	}
	return nil
}
