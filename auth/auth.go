// Package auth holds the principals of the HTTP edge: named API tokens, each with a role and optional allowed
// scope prefixes (docs/security.md#principals). Tokens live in memory only as SHA-256 digests.
//
// Invariants:
//   - A token is looked up by its digest; the token itself is never stored, logged or compared byte by byte.
//   - A principal with no scope prefixes may use every scope; one with prefixes may use exactly the scopes that
//     start with one of them (a plain byte prefix: "team-a/" allows "team-a/x", not "team-ab").
//   - Role admin may use every route, the dashboard and the operator actions; role agent may use Sources, Memory,
//     Experience, MCP and read its own scopes' operations.
package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Roles.
const (
	RoleAdmin = "admin"
	RoleAgent = "agent"
)

// MinTokenLength is the shortest token accepted in configuration (32 characters: 128 bits as hex).
const MinTokenLength = 32

// DefaultAdminName names the principal of the single POWERCONTEXT_AUTH_TOKEN.
const DefaultAdminName = "admin"

// maxScopeBytes is the longest scope id (and so the longest useful prefix).
const maxScopeBytes = 256

// RateLimit is a principal's own request limit per window (nil: the server's default applies).
type RateLimit struct {
	Requests int
	Window   time.Duration
}

// Principal is one named token.
type Principal struct {
	Name   string
	Role   string
	Scopes []string // allowed scope prefixes; empty means every scope
	// RateLimit, when set, limits this principal even when the server-wide rate limit is off.
	RateLimit *RateLimit
	digest    [sha256.Size]byte
}

// Admin reports whether p has the admin role.
func (p *Principal) Admin() bool { return p != nil && p.Role == RoleAdmin }

// Restricted reports whether p may use only some scopes.
func (p *Principal) Restricted() bool { return p != nil && len(p.Scopes) > 0 }

// AllowsScope reports whether p may use scope. A nil principal (no auth configured) may use every scope.
func (p *Principal) AllowsScope(scope string) bool {
	if !p.Restricted() {
		return true
	}
	for _, prefix := range p.Scopes {
		if strings.HasPrefix(scope, prefix) {
			return true
		}
	}
	return false
}

// Binding is a short fingerprint of p's token, stored with a dashboard session so that replacing the token (same
// name, new secret) ends the sessions opened with the old one. It reveals nothing usable about the token.
func (p *Principal) Binding() string {
	sum := sha256.Sum256(append([]byte("powercontext-session-binding:"), p.digest[:]...))
	return hex.EncodeToString(sum[:8])
}

// Set is the configured principals. The zero Set (or nil) has none: the server then runs without auth.
type Set struct {
	byDigest map[[sha256.Size]byte]*Principal
	byName   map[string]*Principal
}

// Empty reports whether no principal is configured.
func (s *Set) Empty() bool { return s == nil || len(s.byDigest) == 0 }

// Authenticate returns the principal whose token is token.
func (s *Set) Authenticate(token string) (*Principal, bool) {
	if s.Empty() || token == "" {
		return nil, false
	}
	p, ok := s.byDigest[sha256.Sum256([]byte(token))]
	return p, ok
}

// AdminSecret is key material derived from the admin tokens' digests (sorted, so the order of configuration does
// not matter; nil without an admin token): the server secret when POWERCONTEXT_SERVER_SECRET is unset. It changes
// when an admin token is added, removed or replaced.
func (s *Set) AdminSecret() []byte {
	if s.Empty() {
		return nil
	}
	var digests [][sha256.Size]byte
	for d, p := range s.byDigest {
		if p.Admin() {
			digests = append(digests, d)
		}
	}
	if len(digests) == 0 {
		return nil
	}
	sort.Slice(digests, func(i, j int) bool { return bytes.Compare(digests[i][:], digests[j][:]) < 0 })
	h := sha256.New()
	h.Write([]byte("powercontext-server-secret:"))
	for _, d := range digests {
		h.Write(d[:])
	}
	return h.Sum(nil)
}

// ByName returns the principal named name.
func (s *Set) ByName(name string) (*Principal, bool) {
	if s.Empty() {
		return nil, false
	}
	p, ok := s.byName[name]
	return p, ok
}

// Names returns the principals' names, sorted.
func (s *Set) Names() []string {
	if s.Empty() {
		return nil
	}
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TokenSpec is one entry of a tokens file or of POWERCONTEXT_AUTH_TOKENS. Exactly one of Token and TokenSHA256 is
// set; a digest keeps the secret out of the file (sha256sum of the token, hex).
type TokenSpec struct {
	Name        string   `json:"name"`
	Role        string   `json:"role"`
	Token       string   `json:"token,omitempty"`
	TokenSHA256 string   `json:"token_sha256,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	RateLimit   *struct {
		Requests      int     `json:"requests"`
		WindowSeconds float64 `json:"window_seconds"`
	} `json:"rate_limit,omitempty"`
}

// ParseTokens reads a tokens document: {"tokens":[TokenSpec…]} or a bare array of them. Unknown members are
// refused (a misspelt "scopes" must not silently grant every scope).
func ParseTokens(data []byte) ([]TokenSpec, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty document")
	}
	var specs []TokenSpec
	var doc struct {
		Tokens *[]TokenSpec `json:"tokens"`
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var err error
	if trimmed[0] == '[' {
		err = dec.Decode(&specs)
	} else {
		err = dec.Decode(&doc)
		if err == nil && doc.Tokens == nil {
			err = errors.New(`missing "tokens" array`)
		}
		if doc.Tokens != nil {
			specs = *doc.Tokens
		}
	}
	if err != nil {
		return nil, fmt.Errorf("not a tokens document: %s", jsonError(err))
	}
	if dec.More() {
		return nil, errors.New("not a tokens document: more than one JSON value")
	}
	return specs, nil
}

// jsonError describes a decoding error without quoting the input (which may hold a token).
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s has the wrong type", te.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ")
	default:
		return err.Error()
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// NewSet validates specs and builds the set. Errors name the entry (by name or position), never a token.
func NewSet(specs []TokenSpec) (*Set, error) {
	s := &Set{byDigest: map[[sha256.Size]byte]*Principal{}, byName: map[string]*Principal{}}
	for i, sp := range specs {
		where := fmt.Sprintf("token %d", i+1)
		if sp.Name != "" {
			where = fmt.Sprintf("token %q", sp.Name)
		}
		p, err := principal(sp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if _, dup := s.byName[p.Name]; dup {
			return nil, fmt.Errorf("%s: the name is used twice", where)
		}
		if _, dup := s.byDigest[p.digest]; dup {
			return nil, fmt.Errorf("%s: the same token is configured twice", where)
		}
		s.byName[p.Name], s.byDigest[p.digest] = p, p
	}
	return s, nil
}

func principal(sp TokenSpec) (*Principal, error) {
	if !nameRE.MatchString(sp.Name) {
		return nil, errors.New("name must be 1..64 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)")
	}
	p := &Principal{Name: sp.Name, Role: sp.Role}
	switch sp.Role {
	case RoleAdmin, RoleAgent:
	case "":
		return nil, errors.New(`role is required: "admin" or "agent"`)
	default:
		return nil, fmt.Errorf(`unknown role %q: use "admin" or "agent"`, sp.Role)
	}
	switch {
	case sp.Token != "" && sp.TokenSHA256 != "":
		return nil, errors.New(`give "token" or "token_sha256", not both`)
	case sp.Token != "":
		if err := checkToken(sp.Token); err != nil {
			return nil, err
		}
		p.digest = sha256.Sum256([]byte(sp.Token))
	case sp.TokenSHA256 != "":
		b, err := hex.DecodeString(sp.TokenSHA256)
		if err != nil || len(b) != sha256.Size {
			return nil, errors.New(`token_sha256 must be 64 hex digits (sha256 of the token)`)
		}
		copy(p.digest[:], b)
		for _, ph := range placeholderTokens {
			if p.digest == sha256.Sum256([]byte(ph)) {
				return nil, errPlaceholder
			}
		}
	default:
		return nil, errors.New(`"token" or "token_sha256" is required`)
	}
	for _, prefix := range sp.Scopes {
		if prefix == "" || len(prefix) > maxScopeBytes || !utf8.ValidString(prefix) || strings.IndexByte(prefix, 0) >= 0 {
			return nil, fmt.Errorf("each scope prefix must be 1..%d bytes of UTF-8 without NUL", maxScopeBytes)
		}
	}
	if sp.Scopes != nil && len(sp.Scopes) == 0 {
		return nil, errors.New(`"scopes" is empty: omit it to allow every scope, or list the allowed prefixes`)
	}
	p.Scopes = append([]string(nil), sp.Scopes...)
	if rl := sp.RateLimit; rl != nil {
		if rl.Requests < 1 || rl.WindowSeconds <= 0 {
			return nil, errors.New("rate_limit needs requests >= 1 and window_seconds > 0")
		}
		p.RateLimit = &RateLimit{Requests: rl.Requests, Window: time.Duration(rl.WindowSeconds * float64(time.Second))}
	}
	return p, nil
}

// placeholderTokens are the example tokens this repository's deploy recipes ship (deploy/compose/env.example,
// deploy/kubernetes/secret.example.yaml); IsPlaceholderToken refuses them so a copied example never guards a server.
var placeholderTokens = []string{"change-me-to-a-long-random-token", "change-me"}

// IsPlaceholderToken reports a token that is one of the deploy recipes' placeholders or is obviously one: equal to
// a placeholder, or starting with "change-me", "changeme" or "replace-me", ignoring case.
func IsPlaceholderToken(tok string) bool {
	lower := strings.ToLower(tok)
	for _, prefix := range []string{"change-me", "changeme", "change_me", "replace-me", "replaceme"} {
		if strings.HasPrefix(lower, prefix) {
			return true
		}
	}
	return slices.Contains(placeholderTokens, lower)
}

// errPlaceholder is the refusal of a placeholder token (it never quotes the token).
var errPlaceholder = errors.New("the token is a placeholder from the deploy examples: replace it (generate one with: openssl rand -hex 32)")

// checkToken refuses placeholders and enforces the minimum length and a printable token (it travels in a header).
func checkToken(tok string) error {
	if IsPlaceholderToken(tok) {
		return errPlaceholder
	}
	if len(tok) < MinTokenLength {
		return fmt.Errorf("the token is shorter than %d characters (generate one with: openssl rand -hex 32)", MinTokenLength)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return errors.New("the token must be printable ASCII without spaces")
		}
	}
	return nil
}

// AdminToken is the set of the single POWERCONTEXT_AUTH_TOKEN: one unrestricted admin named "admin". It does not
// check the length (configuration validation does, through NewSet); an empty token gives an empty set.
func AdminToken(token string) *Set {
	if token == "" {
		return &Set{}
	}
	p := &Principal{Name: DefaultAdminName, Role: RoleAdmin, digest: sha256.Sum256([]byte(token))}
	return &Set{byDigest: map[[sha256.Size]byte]*Principal{p.digest: p}, byName: map[string]*Principal{p.Name: p}}
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal of the request (nil when the server has no auth or none was resolved).
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}
