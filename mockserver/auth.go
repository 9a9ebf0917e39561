package mockserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// The one bearer check, used by the API and the control API alike.

var (
	errNoAuthorization = errors.New("no Authorization header")
	errNotBearer       = errors.New("the Authorization header is not \"Bearer <token>\"")
)

// bearerToken reads the token of an Authorization header (RFC 6750 over
// RFC 7235): the scheme is required and matched without regard to case,
// then one or more spaces, then a token.
func bearerToken(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", errNoAuthorization
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", errNotBearer
	}
	return token, nil
}

// sameSecret compares a presented secret with a known one in constant time.
// Digests are compared rather than the secrets themselves, because
// ConstantTimeCompare returns at once on a length mismatch and would tell a
// secret's length.
func sameSecret(presented, known string) bool {
	return sameDigest(sha256.Sum256([]byte(presented)), sha256.Sum256([]byte(known)))
}

// sameDigest is the one constant-time comparison of secrets, by their
// SHA-256 digests: sameSecret's, and lookupKey's against the digests of the
// known keys made once.
func sameDigest(got, want [sha256.Size]byte) bool {
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// authenticate finds who is calling the API from the Authorization header.
func (s *Server) authenticate(r *http.Request) (*fixtures.Principal, *apiError) {
	token, err := bearerToken(r)
	switch {
	case errors.Is(err, errNoAuthorization):
		return nil, errorf(codeAuthRequired, "send an Authorization header with a bearer token: Authorization: Bearer <api key>")
	case err != nil:
		return nil, errorf(codeAuthRequired, "the Authorization header must be \"Bearer <api key>\"")
	}
	if p := s.lookupKey(token); p != nil {
		return p, nil
	}
	if strings.HasPrefix(token, store.IdentityKeyPrefix) {
		// An agent's key lives in the mock session it was issued in, and
		// dies with its agent: refused even where unknown keys are let in.
		if ms := s.store.Existing(r.Header.Get(SessionHeader)); ms != nil {
			if p := ms.IdentityByKey(token); p != nil {
				return p, nil
			}
		}
		return nil, errorf(codeAuthRequired, "the agent API key was revoked with its agent, or never issued in this mock session")
	}
	if s.strictAuth {
		return nil, errorf(codeAuthRequired, "the API key is not known to this server")
	}
	return guest(&s.fixtures.DefaultPrincipal, token), nil
}

// guest is the user an API key that no principal owns acts as: a member of
// the default principal's team (which owns fixture runs, so a client team
// that starts the mock with its real key sees data at once), and a user of
// its own, so two unknown keys are two users, as two real keys would be.
// The uid is derived from a digest of the key, never the key itself, and is
// the same for a key every time, across restarts too.
func guest(dflt *fixtures.Principal, key string) *fixtures.Principal {
	sum := sha256.Sum256([]byte(key))
	tag := hex.EncodeToString(sum[:6])
	p := *dflt
	p.APIKey = ""
	p.UID = dflt.UID + "-" + tag
	p.DisplayName = strings.TrimSpace(dflt.DisplayName + " " + tag)
	if local, domain, ok := strings.Cut(dflt.Email, "@"); ok {
		p.Email = local + "+" + tag + "@" + domain
	}
	return &p
}

// lookupKey compares the token with every known key, each in constant time
// and all of them every time, so timing tells nothing about which key, or
// how much of one, was right. It compares digests as sameSecret does, but
// the known keys' digests are made once (New), the token's once per request.
func (s *Server) lookupKey(token string) *fixtures.Principal {
	got := sha256.Sum256([]byte(token))
	var found *fixtures.Principal
	for _, k := range s.keys { // all of them, whether one matched or not
		if sameDigest(got, k.digest) {
			found = k.principal
		}
	}
	return found
}

// knownKey is a principal's API key as sameDigest compares it.
type knownKey struct {
	digest    [sha256.Size]byte
	principal *fixtures.Principal
}

// authenticateControl checks the control token, when one is set.
func (s *Server) authenticateControl(r *http.Request) *apiError {
	if s.controlToken == "" {
		return nil
	}
	if token, err := bearerToken(r); err != nil || !sameSecret(token, s.controlToken) {
		return errorf(codeAuthRequired, "the control API needs its token: Authorization: Bearer <control token>")
	}
	return nil
}
