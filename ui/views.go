package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/opkinds"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

// statusOrder is the state machine's reading order (docs/protocol.md#state-machine).
var statusOrder = map[string]int{db.StatusQueued: 0, db.StatusRunning: 1, db.StatusRetryWait: 2, db.StatusCancelling: 3,
	db.StatusFailed: 4, db.StatusSucceeded: 5, db.StatusCancelled: 6}

func statuses() []string {
	out := make([]string, 0, len(statusOrder))
	for s := range statusOrder {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return statusOrder[out[i]] < statusOrder[out[j]] })
	return out
}

const (
	defaultLimit = 50
	maxLimit     = 100
)

// ---- overview ----

type overviewView struct {
	Now          time.Time
	Queue        []queueRow
	BlockedCount int64
	Members      []memberGroup
	MemberCount  int
	Health       string // coordinator.MembershipCheck state for an api process
	HealthReason string
	Leader       leaderView
}

func (v overviewView) frame() frame {
	return frame{Title: "Overview", Nav: "overview", AutoRefresh: 15}
}

type queueRow struct {
	Kind      string
	Status    string
	Count     int64
	OldestAge time.Duration
}

type memberGroup struct {
	Role    string
	Members []memberRow
}

type memberRow struct {
	db.RuntimeMember
	HeartbeatAge time.Duration
	ExpiresIn    time.Duration
}

type leaderView struct {
	State     string // held | expired | never
	Owner     string
	Fence     int64
	ExpiresAt time.Time
	ExpiresIn time.Duration
	UpdatedAt time.Time
}

func (u *ui) overview(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	ctx := r.Context()
	now, err := u.store.DBNow(ctx)
	if err != nil {
		return u.fail(r, err)
	}
	v := overviewView{Now: now}

	stats, err := u.ledger.QueueStatistics(ctx)
	if err != nil {
		return u.fail(r, err)
	}
	for _, s := range stats {
		kind, ok := opkinds.Public(s.Kind)
		if !ok {
			continue
		}
		v.Queue = append(v.Queue, queueRow{Kind: kind, Status: s.Status, Count: s.Count, OldestAge: s.OldestAge})
		if s.Status == db.StatusFailed {
			v.BlockedCount += s.Count
		}
	}
	sort.Slice(v.Queue, func(i, j int) bool {
		a, b := v.Queue[i], v.Queue[j]
		if a.Kind != b.Kind {
			return a.Kind > b.Kind // memory_flush before experience_incubation
		}
		return statusOrder[a.Status] < statusOrder[b.Status]
	})

	members, err := coordinator.LiveMembers(ctx, u.store)
	if err != nil {
		return u.fail(r, err)
	}
	v.MemberCount = len(members)
	v.Health, v.HealthReason = coordinator.MembershipCheck(members, "api")
	roleRank := map[string]int{"all": 0, "api": 1, "scheduler": 2, "worker": 3}
	for _, m := range members { // LiveMembers orders by role, then id
		row := memberRow{RuntimeMember: m, HeartbeatAge: now.Sub(m.HeartbeatAt), ExpiresIn: m.ExpiresAt.Sub(now)}
		if n := len(v.Members); n > 0 && v.Members[n-1].Role == m.Role {
			v.Members[n-1].Members = append(v.Members[n-1].Members, row)
			continue
		}
		v.Members = append(v.Members, memberGroup{Role: m.Role, Members: []memberRow{row}})
	}
	sort.SliceStable(v.Members, func(i, j int) bool {
		ri, iok := roleRank[v.Members[i].Role]
		rj, jok := roleRank[v.Members[j].Role]
		if !iok {
			ri = len(roleRank)
		}
		if !jok {
			rj = len(roleRank)
		}
		return ri < rj
	})

	lease, err := u.store.SchedulerLeaseGet(ctx, coordinator.LeaseWorkDiscovery)
	switch {
	case errors.Is(err, db.ErrNotFound):
		v.Leader = leaderView{State: "never"}
	case err != nil:
		return u.fail(r, err)
	default:
		v.Leader = leaderView{Owner: lease.OwnerID, Fence: lease.Fence, ExpiresAt: lease.LeaseExpiresAt,
			ExpiresIn: lease.LeaseExpiresAt.Sub(now), UpdatedAt: lease.UpdatedAt, State: "expired"}
		switch {
		case lease.OwnerID != "" && now.Before(lease.LeaseExpiresAt):
			v.Leader.State = "held"
		case lease.OwnerID == "" && lease.Fence == 0:
			v.Leader.State = "never"
		}
	}
	return http.StatusOK, "overview", v
}

// ---- operations list and blocked lanes ----

// opRow is one operation as the lists show it.
type opRow struct {
	ID                     string
	Kind                   string
	Scope                  string
	ScopeURL               string
	ReviewURL              string // experience incubations: the scope's candidates
	Status                 string
	AttemptCount           int32
	GenerationAttemptCount int32
	MaxAttempts            int32
	RecoveryGeneration     int32
	Version                int64
	CreatedAt              time.Time
	UpdatedAt              time.Time
	CompletedAt            time.Time
	AvailableAt            time.Time
	ErrorCategory          string
	ErrorCode              string
	CanRetry               bool
	CanCancel              bool
	CanSkip                bool // a failed window (docs/protocol.md#skip)
}

func toRow(w db.WorkItem, kind string) opRow {
	return opRow{ID: w.WorkID, Kind: kind, Scope: w.ScopeID, ScopeURL: listURL("/ui/operations", filters{Scope: w.ScopeID}, ""),
		Status: w.Status, AttemptCount: w.AttemptCount, GenerationAttemptCount: w.GenerationAttemptCount,
		MaxAttempts: w.MaxAttempts, RecoveryGeneration: w.RecoveryGeneration, Version: w.StateVersion,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, CompletedAt: w.CompletedAt, AvailableAt: w.AvailableAt,
		ErrorCategory: w.ErrorCategory, ErrorCode: w.ErrorCode,
		CanRetry: w.Status == db.StatusFailed,
		CanCancel: w.Status == db.StatusQueued || w.Status == db.StatusRunning || w.Status == db.StatusRetryWait ||
			w.Status == db.StatusFailed,
		CanSkip:   w.Status == db.StatusFailed && (w.Kind == memory.Kind || w.Kind == experience.Kind),
		ReviewURL: reviewURL(w)}
}

func reviewURL(w db.WorkItem) string {
	if w.Kind != experience.Kind {
		return ""
	}
	return candidateListURL(candidateFilters{Scope: w.ScopeID}, "")
}

type filters struct {
	Scope  string
	Kind   string // public name
	Status string
	Limit  int
}

type listView struct {
	Now      time.Time
	Filters  filters
	Kinds    []string
	Statuses []string
	Items    []opRow
	NextURL  string
	FirstURL string
	Paged    bool // this is not the first page
	Invalid  string
}

type operationsView struct{ listView }

func (v operationsView) frame() frame { return frame{Title: "Operations", Nav: "operations"} }

type blockedView struct{ listView }

func (v blockedView) frame() frame { return frame{Title: "Blocked lanes", Nav: "blocked"} }

// listURL builds a list link; cursor "" is the first page.
func listURL(path string, f filters, cursor string) string {
	q := url.Values{}
	if f.Scope != "" {
		q.Set("scope_id", f.Scope)
	}
	if f.Kind != "" {
		q.Set("kind", f.Kind)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Limit != 0 && f.Limit != defaultLimit {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// loadList reads one keyset page. fixedStatus, when set, replaces the status filter (blocked lanes).
func (u *ui) loadList(r *http.Request, path, fixedStatus string) (int, listView, error) {
	q := r.URL.Query()
	v := listView{Kinds: opkinds.PublicNames(), Statuses: statuses(),
		Filters: filters{Scope: q.Get("scope_id"), Kind: q.Get("kind"), Status: q.Get("status"), Limit: defaultLimit}}
	if fixedStatus != "" {
		v.Filters.Status = fixedStatus
	}
	p := coordinator.ListParams{ScopeID: v.Filters.Scope, Status: v.Filters.Status}
	var problems []string
	if v.Filters.Scope != "" {
		if err := sources.ValidateScope(v.Filters.Scope); err != nil {
			problems = append(problems, "scope must be 1..256 bytes of UTF-8 without NUL")
		}
	}
	switch internal, ok := opkinds.Ledger(v.Filters.Kind); {
	case v.Filters.Kind == "":
		p.Kinds = opkinds.LedgerKinds()
	case ok:
		p.Kinds = []string{internal}
	default:
		problems = append(problems, "kind must be one of "+strings.Join(opkinds.PublicNames(), ", "))
	}
	if _, ok := statusOrder[v.Filters.Status]; v.Filters.Status != "" && !ok {
		problems = append(problems, "status must be one of "+strings.Join(statuses(), ", "))
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			problems = append(problems, "limit must be 1..100")
		} else {
			v.Filters.Limit = n
		}
	}
	if c := q.Get("cursor"); c != "" {
		at, id, ok := coordinator.DecodeListCursor(c)
		if !ok {
			problems = append(problems, "the page cursor is malformed; start again from the first page")
		}
		p.BeforeCreatedAt, p.BeforeWorkID = at, id
		v.Paged = true
	}
	listFilters := v.Filters
	if fixedStatus != "" {
		listFilters.Status = ""
	}
	v.FirstURL = listURL(path, listFilters, "")
	if len(problems) > 0 {
		v.Invalid = strings.Join(problems, "; ") + "."
		return http.StatusUnprocessableEntity, v, nil
	}
	now, err := u.store.DBNow(r.Context())
	if err != nil {
		return 0, v, err
	}
	v.Now = now
	p.Limit = int32(v.Filters.Limit) + 1 // one more tells whether a next page exists
	items, err := u.ledger.List(r.Context(), p)
	if err != nil {
		return 0, v, err
	}
	for i, w := range items {
		if i == v.Filters.Limit {
			v.NextURL = listURL(path, listFilters, coordinator.EncodeListCursor(items[i-1]))
			break
		}
		if kind, ok := opkinds.Public(w.Kind); ok {
			v.Items = append(v.Items, toRow(w, kind))
		}
	}
	return http.StatusOK, v, nil
}

func (u *ui) operations(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	status, v, err := u.loadList(r, "/ui/operations", "")
	if err != nil {
		return u.fail(r, err)
	}
	return status, "operations", operationsView{v}
}

func (u *ui) blocked(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	status, v, err := u.loadList(r, "/ui/blocked", db.StatusFailed)
	if err != nil {
		return u.fail(r, err)
	}
	return status, "blocked", blockedView{v}
}

// ---- one operation ----

type operationView struct {
	Now            time.Time
	Op             opRow
	LaneKey        string
	LaneSequence   int64
	LaneHead       int64 // 0 = idle lane
	IsHead         bool
	Blocking       bool
	PayloadVersion int32
	Payload        payloadSummary
	LeaseOwner     string
	LeaseFence     int64
	LeaseExpiresAt time.Time
	LeaseExpiresIn time.Duration
	CancelReq      bool
	ResultCode     string
	Result         []resultField
	Attempts       []attemptRow
	InMotion       bool
}

func (v operationView) frame() frame {
	f := frame{Title: "Operation " + shortID(v.Op.ID), Nav: "operations"}
	if v.InMotion {
		f.AutoRefresh = 2
	}
	return f
}

// payloadSummary is the window coordinates of a payload — never anything else in it.
type payloadSummary struct {
	Valid            bool
	CursorName       string
	CursorGeneration int64
	After            int64
	Through          int64
}

type resultField struct {
	Name  string
	Value string
}

type attemptRow struct {
	db.WorkAttempt
	Duration time.Duration
	Running  bool
}

func (u *ui) operation(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	ctx := r.Context()
	w, err := u.ledger.Get(ctx, r.PathValue("id"))
	if errors.Is(err, coordinator.ErrNotFound) {
		return http.StatusNotFound, "notfound", nil
	}
	if err != nil {
		return u.fail(r, err)
	}
	kind, ok := opkinds.Public(w.Kind)
	if !ok {
		return http.StatusNotFound, "notfound", nil // internal work is not shown, like the Operation API
	}
	now, err := u.store.DBNow(ctx)
	if err != nil {
		return u.fail(r, err)
	}
	v := operationView{Now: now, Op: toRow(w, kind), LaneKey: w.LaneKey, LaneSequence: w.LaneSequence,
		PayloadVersion: w.PayloadVersion, Payload: summarizePayload(w.Payload), LeaseOwner: w.LeaseOwner,
		LeaseFence: w.LeaseFence, LeaseExpiresAt: w.LeaseExpiresAt, CancelReq: w.CancelRequested,
		ResultCode: w.ResultCode, Result: summarizeResult(w.ResultPayload),
		InMotion: w.Status == db.StatusQueued || w.Status == db.StatusRunning || w.Status == db.StatusRetryWait ||
			w.Status == db.StatusCancelling}
	if !w.LeaseExpiresAt.IsZero() {
		v.LeaseExpiresIn = w.LeaseExpiresAt.Sub(now)
	}
	lane, err := u.store.WorkLaneGet(ctx, w.LaneKey)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return u.fail(r, err)
	}
	v.LaneHead = lane.HeadSequence
	v.IsHead = lane.HeadSequence == w.LaneSequence
	v.Blocking = v.IsHead && w.Status == db.StatusFailed
	attempts, err := u.ledger.Attempts(ctx, w.WorkID)
	if err != nil {
		return u.fail(r, err)
	}
	for _, a := range attempts {
		row := attemptRow{WorkAttempt: a}
		if a.FinishedAt.IsZero() {
			row.Running = true
			row.Duration = now.Sub(a.StartedAt)
		} else {
			row.Duration = a.FinishedAt.Sub(a.StartedAt)
		}
		v.Attempts = append(v.Attempts, row)
	}
	slices.Reverse(v.Attempts) // newest first, like every list here
	return http.StatusOK, "operation", v
}

// summarizePayload decodes only the window coordinates; every other field is ignored.
func summarizePayload(b []byte) payloadSummary {
	var p struct {
		CursorName       *string `json:"cursor_name"`
		CursorGeneration *int64  `json:"cursor_generation"`
		After            *int64  `json:"after"`
		Through          *int64  `json:"through"`
	}
	if len(b) == 0 || json.Unmarshal(b, &p) != nil || p.CursorName == nil || p.CursorGeneration == nil ||
		p.After == nil || p.Through == nil || len(*p.CursorName) > 64 {
		return payloadSummary{}
	}
	return payloadSummary{Valid: true, CursorName: *p.CursorName, CursorGeneration: *p.CursorGeneration,
		After: *p.After, Through: *p.Through}
}

// summarizeResult keeps the numeric and boolean fields of a result (one level of nesting, "memory.revision") and
// its public type; strings and arrays are dropped so no free text can reach the page.
func summarizeResult(b []byte) []resultField {
	if len(b) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	var out []resultField
	var walk func(prefix string, m map[string]any, depth int)
	walk = func(prefix string, m map[string]any, depth int) {
		for k, val := range m {
			if !fieldName(k) {
				continue
			}
			name := prefix + k
			switch t := val.(type) {
			case json.Number:
				out = append(out, resultField{Name: name, Value: t.String()})
			case bool:
				out = append(out, resultField{Name: name, Value: strconv.FormatBool(t)})
			case nil:
				out = append(out, resultField{Name: name, Value: "null"})
			case string:
				if _, ok := opkinds.Ledger(t); ok && name == "type" {
					out = append(out, resultField{Name: name, Value: t})
				}
			case map[string]any:
				if depth == 0 {
					walk(name+".", t, 1)
				}
			}
		}
	}
	walk("", m, 0)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// fieldName accepts short snake_case keys only (a result's field names come from code, never from content).
func fieldName(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
