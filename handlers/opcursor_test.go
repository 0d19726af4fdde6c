package handlers

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/internal/serverkey"
)

var (
	tenantATok = strings.Repeat("t", 32) // role agent, scopes tenantA/
	tenantBTok = strings.Repeat("u", 32) // role agent, scopes tenantB/
)

func tenantPrincipals(t testing.TB) *auth.Set {
	t.Helper()
	specs, err := auth.ParseTokens([]byte(`[
		{"name":"ops","role":"admin","token":"` + adminTok + `"},
		{"name":"tenant-a","role":"agent","token":"` + tenantATok + `","scopes":["tenantA/"]},
		{"name":"tenant-b","role":"agent","token":"` + tenantBTok + `","scopes":["tenantB/"]}]`))
	require.NoError(t, err)
	s, err := auth.NewSet(specs)
	require.NoError(t, err)
	return s
}

// TestOperationCursorsAreOpaqueAndTenantScoped: a tenant-limited agent pages through GET /v1/operations among
// other tenants' and admin operations (issue 34 item 5). It sees exactly its own operations, newest first; no
// cursor reveals an operation id in any encoding (before, a cursor was base64 of "<µs>:<work id>" of the last row
// read, often another tenant's); a run of hidden rows longer than the page's read budget yields a short page whose
// cursor continues; an altered, truncated, other principal's or other server secret's cursor is 422.
func TestOperationCursorsAreOpaqueAndTenantScoped(t *testing.T) {
	t.Parallel()
	keys := serverkey.New([]byte(strings.Repeat("k", 32)))
	e := newEnv(t, func(d *Deps) { d.Principals = tenantPrincipals(t); d.ServerKeys = keys })

	var allIDs []string
	own := map[string][]string{} // tenant prefix -> its operation ids, oldest first
	enqueue := func(scope string) {
		e.captureDirect(scope, "The queue is durable.")
		id := e.enqueueMemory(scope).WorkID
		allIDs = append(allIDs, id)
		if p, _, ok := strings.Cut(scope, "/"); ok && strings.HasPrefix(p, "tenant") {
			own[p] = append(own[p], id)
		}
	}
	for i := range 4 { // interleaved: A, B, an admin-only scope
		enqueue(fmt.Sprintf("tenantA/s%d", i))
		enqueue(fmt.Sprintf("tenantB/s%d", i))
		enqueue(fmt.Sprintf("zeta/s%d", i))
	}
	allIDs = append(allIDs, e.enqueueMaintenance().WorkID)
	for i := range 3 * maxOperationListReads { // more hidden rows in a row than two-item pages read
		enqueue(fmt.Sprintf("tenantB/run%d", i))
	}
	enqueue("tenantA/last")

	// page lists every page of tok's listing with limit 2, returning the ids and the cursors given; the items come
	// newest first, (created_at, operation_id) strictly descending, each once.
	page := func(tok, query string) (ids, cursors []string, short int) {
		t.Helper()
		cursor, prev := "", ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 100)
			target := "/v1/operations?limit=2" + query
			if cursor != "" {
				target += "&cursor=" + cursor
			}
			r := e.do(http.MethodGet, target, nil, authz(tok))
			require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
			m := r.json(t)
			items := m["items"].([]any)
			require.LessOrEqual(t, len(items), 2)
			for _, it := range items {
				rec := it.(map[string]any)
				ids = append(ids, rec["operation_id"].(string))
				key := rec["created_at"].(string) + "/" + rec["operation_id"].(string)
				if prev != "" {
					require.Greater(t, prev, key, "newest first")
				}
				prev = key
			}
			next, _ := m["next_cursor"].(string)
			if next == "" {
				return ids, cursors, short
			}
			if len(items) < 2 {
				short++
			}
			cursors = append(cursors, next)
			cursor = next
		}
	}
	gotA, cursorsA, shortA := page(tenantATok, "")
	require.ElementsMatch(t, own["tenantA"], gotA, "tenant A sees exactly its own operations")
	gotB, cursorsB, _ := page(tenantBTok, "")
	require.ElementsMatch(t, own["tenantB"], gotB)
	gotAdmin, cursorsAdmin, _ := page(adminTok, "")
	require.ElementsMatch(t, allIDs, gotAdmin, "the admin sees every operation, maintenance included")
	gotA2, _, _ := page(tenantATok, "&kind=memory_flush")
	require.Equal(t, gotA, gotA2)

	// The run of hidden rows is longer than one page's read budget: some page of tenant A is short but continues.
	require.Positive(t, shortA, "a short page with a cursor was expected")

	// No cursor holds an operation id, as text, hex or the UUID's bytes, raw or under any base64 alphabet.
	var needles [][]byte
	for _, id := range allIDs {
		u := uuid.MustParse(id)
		needles = append(needles, []byte(id), []byte(hex.EncodeToString(u[:])), u[:])
	}
	all := append(append(append([]string{}, cursorsA...), cursorsB...), cursorsAdmin...)
	require.NotEmpty(t, all)
	for _, c := range all {
		views := [][]byte{[]byte(c)}
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
			if b, err := enc.DecodeString(c); err == nil {
				views = append(views, b)
			}
		}
		for _, v := range views {
			for _, n := range needles {
				require.NotContains(t, string(v), string(n), "cursor %q reveals an operation id", c)
			}
		}
	}

	// Altered, truncated, extended, another principal's or another secret's cursor: 422 invalid_request, field cursor.
	good := cursorsA[0]
	raw, err := base64.RawURLEncoding.DecodeString(good)
	require.NoError(t, err)
	var bad []string
	for _, i := range []int{0, len(raw) / 2, len(raw) - 1} {
		flipped := append([]byte(nil), raw...)
		flipped[i] ^= 0x01
		bad = append(bad, base64.RawURLEncoding.EncodeToString(flipped))
	}
	bad = append(bad, good[:len(good)-1], good[:len(good)/2], base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]),
		good+"AA", cursorsB[0])
	other := *e
	other.e = New(func() Deps {
		d := e.deps
		d.ServerKeys = serverkey.New([]byte(strings.Repeat("z", 32)))
		return d
	}())
	for _, c := range bad {
		d := e.do(http.MethodGet, "/v1/operations?cursor="+c, nil, authz(tenantATok)).
			requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, "cursor", d["field"], c)
	}
	d := other.do(http.MethodGet, "/v1/operations?cursor="+good, nil, authz(tenantATok)).
		requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	require.Equal(t, "cursor", d["field"])
	// The same secret (another replica configured alike) accepts it.
	same := *e
	same.e = New(e.deps)
	r := same.do(http.MethodGet, "/v1/operations?limit=2&cursor="+good, nil, authz(tenantATok))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
}
