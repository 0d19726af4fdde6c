// Package db is the engine-neutral Store boundary. The coordinator, the domain packages and the runtime talk to a
// Store; one adapter per engine (db/postgresstore, db/mysqlstore, db/sqlitestore) implements it over sqlc-generated
// queries. Only db/ imports db/gen/; only app/ (and test support) picks an engine.
//
// Conventions every adapter keeps:
//   - One method per hand-written SQL statement, named like the query (entity first).
//   - Neutral rows use zero values for SQL NULL: "" for text, nil for bytes, the zero time.Time for times and 0 for
//     sequences that are always > 0 when present (lane head). Adapters translate both ways.
//   - Every time written is UTC truncated to the microsecond; every time read is UTC.
//   - "Lock" methods are locking reads (FOR UPDATE on PostgreSQL/MySQL; on MySQL preceded by a no-op UPDATE of the
//     same row so the row lock really starts; on SQLite a plain read inside a BEGIN IMMEDIATE transaction). They
//     return ErrNotFound when the row does not exist.
//   - "InsertIfAbsent" methods never fail on an existing row; they report whether they inserted.
//   - "Update" methods that return only an error return ErrNotFound when no row matched; ":execrows" methods return
//     the number of rows MATCHED (MySQL connections use CLIENT_FOUND_ROWS), so a compare-and-set that rewrites
//     identical values still counts 1.
//   - Composite methods (named after the statements they chain, e.g. WorkLaneItemLock) run several of the
//     statements above in their order inside the caller's transaction, so an adapter can send them in fewer round
//     trips (one pipelined batch on PostgreSQL, or one statement) without changing what they lock or write. Their
//     semantics are exactly those of the statements run one after the other; when they report a guard that did not
//     match, the caller fails (rolls back) the transaction (docs/protocol.md#round-trips).
//   - Engine deadlock or serialization failures are returned wrapped in ErrDeadlock and are never retried here:
//     the protocol is deadlock-free by construction, so one is a bug to expose, not to hide.
package db

import (
	"context"
	"errors"
	"time"
)

// Engine names a supported database engine.
type Engine string

// The engines, by the name URLs, migration directories and query directories use.
const (
	EnginePostgres Engine = "postgres"
	EngineMySQL    Engine = "mysql"
	EngineSQLite   Engine = "sqlite"
)

// Sentinel errors, defined once.
var (
	// ErrNotFound is returned when a row addressed by its key does not exist.
	ErrNotFound = errors.New("db: not found")
	// ErrConflict is returned when a write violates a unique key the caller did not expect to exist.
	ErrConflict = errors.New("db: conflict")
	// ErrDeadlock wraps an engine deadlock or serialization failure. The ledger never expects one.
	ErrDeadlock = errors.New("db: deadlock or serialization failure")
	// ErrUnavailable wraps an error that means the database cannot be used right now: the connection was refused,
	// dropped or reset, or the server is shutting down or still recovering. The outcome of a statement in flight is
	// unknown (a COMMIT may have been applied); callers treat it like any other failed call. The API answers it with
	// 503 runtime_not_ready.
	ErrUnavailable = errors.New("db: database unavailable")
)

// Store is one engine's connection pool plus the statements of the ledger and the domain.
// Methods called on the Store itself run in autocommit mode; InTx runs fn in one write transaction
// (READ COMMITTED on PostgreSQL/MySQL, BEGIN IMMEDIATE on SQLite). fn must use only q — never the Store, whose
// SQLite writer is the single connection fn already holds — and must not make network or provider calls.
type Store interface {
	Queries
	Engine() Engine
	InTx(ctx context.Context, fn func(ctx context.Context, q Queries) error) error
	// SkipLocked reports whether WorkLaneItemLockSkipLocked skips rows another transaction holds without waiting
	// (PostgreSQL, MariaDB >= 10.6 and MySQL 8; SQLite, where no other transaction ever holds a row), which the
	// batched claim needs (docs/protocol.md#batched-claim). OceanBase reports false: its locking reads start with a
	// no-op UPDATE, which would wait.
	SkipLocked() bool
	Close() error
}

// Queries is every statement, usable on the Store (autocommit) or inside InTx. It only composes the per-table
// interfaces, one file each (db/<table>.go mirrors sql/queries/<engine>/<table>.sql); a consumer that needs a few
// statements declares a narrow interface of its own. The set-based methods ("…Many", one statement over a set) are
// required like the others: an engine without a set statement implements them with the Chain* functions
// (composite.go), which run the per-row statements in order with the same semantics.
type Queries interface {
	ClockQueries
	WorkLaneQueries
	WorkKeyQueries
	WorkItemQueries
	WorkAttemptQueries
	SchedulerLeaseQueries
	SchedulerScanQueries
	RuntimeMemberQueries
	RateLimitWindowQueries
	UISessionQueries
	SourceJournalHeadQueries
	SourceQueries
	SourceCursorQueries
	MemoryRevisionQueries
	MemoryEntryQueries
	MemoryEmbeddingQueries
	ExperienceCandidateQueries
	SkillQueries
	SkillRevisionQueries
	SkillTargetQueries
	SkillPublicationQueries
}

// Work item statuses (docs/protocol.md#state-machine).
const (
	StatusQueued     = "queued"
	StatusRunning    = "running"
	StatusRetryWait  = "retry_wait"
	StatusCancelling = "cancelling"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
)

// Attempt outcomes.
const (
	OutcomeSucceeded          = "succeeded"
	OutcomeRetryWait          = "retry_wait"
	OutcomeSnoozed            = "snoozed"
	OutcomeFailed             = "failed"
	OutcomeCancelled          = "cancelled"
	OutcomeLeaseExpiredRetry  = "lease_expired_retry"
	OutcomeLeaseExpiredFailed = "lease_expired_failed"
)

// WorkItem is one row of pc_work_items.
type WorkItem struct {
	WorkID                 string
	LogicalKey             string
	LaneKey                string
	LaneSequence           int64
	Kind                   string
	PayloadVersion         int32
	ScopeID                string
	Payload                []byte
	Status                 string
	AvailableAt            time.Time
	LeaseOwner             string // "" = NULL
	LeaseFence             int64
	LeaseExpiresAt         time.Time // zero = NULL
	AttemptCount           int32
	GenerationAttemptCount int32
	RecoveryGeneration     int32
	MaxAttempts            int32
	CancelRequested        bool
	ResultCode             string // "" = NULL
	ResultPayload          []byte // nil = NULL
	ErrorCategory          string // "" = NULL
	ErrorCode              string // "" = NULL
	StateVersion           int64
	CreatedAt              time.Time
	UpdatedAt              time.Time
	CompletedAt            time.Time // zero = NULL
}

// WorkAttempt is one row of pc_work_attempts.
type WorkAttempt struct {
	WorkID             string
	AttemptNo          int32
	RecoveryGeneration int32
	OwnerID            string
	Fence              int64
	StartedAt          time.Time
	HeartbeatAt        time.Time // zero = NULL
	FinishedAt         time.Time // zero = NULL
	Outcome            string    // "" = NULL
	ErrorCategory      string
	ErrorCode          string
	TraceID            string
	SpanID             string
}

// WorkLane is one row of pc_work_lanes. HeadSequence 0 means the lane is idle (NULL).
type WorkLane struct {
	LaneKey      string
	NextSequence int64
	HeadSequence int64
}

// WorkKey is one row of pc_work_keys.
type WorkKey struct {
	LogicalKey string
	WorkID     string
	LaneKey    string
	CreatedAt  time.Time
}

// ClaimCandidate is one row of the unlocked claim candidate query.
type ClaimCandidate struct {
	WorkID         string
	LaneKey        string
	LogicalKey     string
	LaneSequence   int64
	Kind           string
	PayloadVersion int32
	Status         string
}

// KindVersions is a supported kind with its payload version range (inclusive).
type KindVersions struct {
	Kind     string
	Min, Max int32
}

// WorkItemClaimManyParams asks for one set-based claim pass.
type WorkItemClaimManyParams struct {
	Supported  []KindVersions
	Candidates int32 // how many oldest due heads per status to consider, and expired heads to return
	Slots      int32 // at most this many claims
	Owner      string
	Lease      time.Duration
	// TraceIDs and SpanIDs, one pair per slot ("" = none), are stored on the new attempt rows.
	TraceIDs, SpanIDs []string
}

// WorkItemClaimManyResult is what a set-based claim pass claimed and saw.
type WorkItemClaimManyResult struct {
	Now     time.Time // the database clock the claims were checked against
	Claimed []ClaimedItem
	Expired []ClaimCandidate // expired lane heads, unlocked: recover them one by one
}

// ClaimedItem is one item a set-based claim pass claimed (its row after the claim) with the trace ids of its
// previous attempt, if any.
type ClaimedItem struct {
	Item                            WorkItem
	Slot                            int32 // 1-based index of the trace ids the attempt row took (0: none given)
	PreviousTraceID, PreviousSpanID string
}

// WorkItemRef names one item of a batch with its lane and logical key.
type WorkItemRef struct {
	LaneKey, LogicalKey, WorkID string
}

// LockedItem is one item locked by WorkLaneKeyItemLockMany.
type LockedItem struct {
	Found  bool // the lane and the item exist (and are now locked)
	Lane   WorkLane
	HasKey bool
	Item   WorkItem
}

// WorkItemSucceedManyParams finishes a batch of verified items as succeeded at Now.
type WorkItemSucceedManyParams struct {
	Now   time.Time
	Items []SucceedItem
}

// SucceedItem is one item of WorkItemSucceedMany.
type SucceedItem struct {
	WorkID          string
	ExpectedVersion int64
	ResultCode      string
	ResultPayload   []byte // nil = NULL
}

// KindVersionCount counts due lane heads of one (kind, payload_version).
type KindVersionCount struct {
	Kind           string
	PayloadVersion int32
	Count          int64
}

// QueueStatistic is the depth and oldest creation time of one (kind, status).
type QueueStatistic struct {
	Kind            string
	Status          string
	Count           int64
	OldestCreatedAt time.Time
}

// WorkLaneAdvanceHeadParams addresses WorkLaneAdvanceHead.
type WorkLaneAdvanceHeadParams struct {
	LaneKey       string
	AfterSequence int64
}

// WorkLaneItemLockParams addresses WorkLaneItemLock.
type WorkLaneItemLockParams struct {
	LaneKey string
	WorkID  string
}

// WorkLaneKeyDeleteItemLockParams addresses WorkLaneKeyDeleteItemLock.
type WorkLaneKeyDeleteItemLockParams struct {
	LaneKey    string
	LogicalKey string
	WorkID     string
}

// WorkItemUpdateStateInsertAttemptParams is a claim's state write and its new attempt.
type WorkItemUpdateStateInsertAttemptParams struct {
	State   WorkItemUpdateStateParams
	Attempt WorkAttempt
}

// WorkItemUpdateStateFinishAttemptParams is a finishing state write, its attempt's finish and, when AdvanceHead is
// set, the lane head's advance.
type WorkItemUpdateStateFinishAttemptParams struct {
	State       WorkItemUpdateStateParams
	Attempt     WorkAttemptFinishParams
	AdvanceHead *WorkLaneAdvanceHeadParams
}

// WorkKeyItemInsertParams is the key, the lane's new allocator and head, and the item of a creating enqueue.
type WorkKeyItemInsertParams struct {
	Key  WorkKey
	Lane WorkLane
	Item WorkItem
}

// WorkItemUpdateStateParams is a compare-and-set of every mutable column of Item on its state_version.
type WorkItemUpdateStateParams struct {
	Item            WorkItem
	ExpectedVersion int64
}

// WorkItemExtendLeaseParams guards a heartbeat.
type WorkItemExtendLeaseParams struct {
	WorkID         string
	LeaseOwner     string
	LeaseFence     int64
	AttemptCount   int32
	LeaseExpiresAt time.Time
}

// WorkItemClaimCandidatesParams selects the candidate heads: due heads of Kinds and expired heads of any kind.
type WorkItemClaimCandidatesParams struct {
	Kinds []string
	Limit int32
}

// WorkItemListParams filters and pages WorkItemList. Kinds must be non-empty (only these kinds are listed).
// Empty ScopeID/Status mean "any". When BeforeCreatedAt is non-zero, only rows strictly before
// (BeforeCreatedAt, BeforeWorkID) in (created_at, work_id) order are returned.
type WorkItemListParams struct {
	ScopeID         string
	Kinds           []string
	Status          string
	BeforeCreatedAt time.Time
	BeforeWorkID    string
	Limit           int32
}

// WorkItemPurgeCandidatesParams bounds WorkItemPurgeCandidates.
type WorkItemPurgeCandidatesParams struct {
	CompletedBefore time.Time
	Limit           int32
}

// WorkAttemptFinishParams finishes one attempt.
type WorkAttemptFinishParams struct {
	WorkID        string
	AttemptNo     int32
	FinishedAt    time.Time
	Outcome       string
	ErrorCategory string // "" = NULL
	ErrorCode     string // "" = NULL
}

// WorkAttemptHeartbeatParams records a heartbeat on one attempt.
type WorkAttemptHeartbeatParams struct {
	WorkID      string
	AttemptNo   int32
	HeartbeatAt time.Time
}

// WorkAttemptGetParams addresses one attempt.
type WorkAttemptGetParams struct {
	WorkID    string
	AttemptNo int32
}

// WorkAttemptCountSnoozedParams addresses one item's recovery generation.
type WorkAttemptCountSnoozedParams struct {
	WorkID             string
	RecoveryGeneration int32
}

// SchedulerScanUpdateParams is a compare-and-set of Scan on its state_version.
type SchedulerScanUpdateParams struct {
	Scan            SchedulerScan
	ExpectedVersion int64
}

// RuntimeMemberPurgeExpiredParams bounds RuntimeMemberPurgeExpired.
type RuntimeMemberPurgeExpiredParams struct {
	ExpiredBefore time.Time
	Limit         int32
}

// RateLimitWindowLockParams addresses one rate-limit window.
type RateLimitWindowLockParams struct {
	PrincipalKey    string
	PolicyID        string
	WindowStartedAt time.Time
}

// RateLimitWindowIncrementParams addresses one rate-limit window.
type RateLimitWindowIncrementParams struct {
	PrincipalKey    string
	PolicyID        string
	WindowStartedAt time.Time
}

// RateLimitWindowPurgeExpiredParams bounds RateLimitWindowPurgeExpired.
type RateLimitWindowPurgeExpiredParams struct {
	ExpiredBefore time.Time
	Limit         int32
}

// UISessionPurgeExpiredParams bounds UISessionPurgeExpired.
type UISessionPurgeExpiredParams struct {
	ExpiredBefore time.Time
	Limit         int32
}

// SchedulerLease is one row of pc_scheduler_leases.
type SchedulerLease struct {
	LeaseName      string
	OwnerID        string // "" = NULL
	Fence          int64
	LeaseExpiresAt time.Time // zero = NULL
	UpdatedAt      time.Time
}

// SchedulerScan is one row of pc_scheduler_scans.
type SchedulerScan struct {
	Discoverer   string
	NextRunAt    time.Time
	Continuation string // "" = NULL
	StateVersion int64
	UpdatedAt    time.Time
}

// RuntimeMember is one row of pc_runtime_members.
type RuntimeMember struct {
	MemberID         string
	Role             string
	BuildVersion     string
	SchemaMin        int64
	SchemaMax        int64
	PayloadMin       int32
	PayloadMax       int32
	BehaviorRevision string
	StartedAt        time.Time
	HeartbeatAt      time.Time
	ExpiresAt        time.Time
}

// RateLimitWindow is one row of pc_rate_limit_windows.
type RateLimitWindow struct {
	PrincipalKey    string
	PolicyID        string
	WindowStartedAt time.Time
	RequestCount    int32
	ExpiresAt       time.Time
}

// UISession is one row of pc_ui_sessions: a dashboard sign-in. SessionDigest is the SHA-256 (hex) of the random
// session id the browser holds, never the id; PrincipalBinding ties the session to the token that opened it
// (auth.Principal.Binding), so a token removed or replaced in the configuration ends its sessions.
type UISession struct {
	SessionDigest    string
	PrincipalName    string
	PrincipalBinding string
	CreatedAt        time.Time
	ExpiresAt        time.Time
}

// MemoryRevision is one row of pc_memory_revisions.
type MemoryRevision struct {
	ScopeID          string
	Revision         int64
	WorkID           string
	CursorGeneration int64
	WindowAfter      int64
	WindowThrough    int64
	EntryCount       int32
	CreatedAt        time.Time
	// LastEntryID is the highest entry id the scope had given out when the revision was written (0 = NULL: none
	// yet, or a revision an older build wrote); the next new entry gets LastEntryID + 1 (docs/memory.md#entry-ids).
	LastEntryID int64
	// EvictedEntryIDs is the JSON array of the ids the entry cap dropped from this revision (docs/memory.md#eviction);
	// nil = NULL: a revision an older build wrote, which recorded nothing (and no ids).
	EvictedEntryIDs []byte
}

// MemoryRevisionGetParams names one revision of a scope.
type MemoryRevisionGetParams struct {
	ScopeID  string
	Revision int64
}

// MemoryRevisionListParams pages a scope's revisions, newest first.
type MemoryRevisionListParams struct {
	ScopeID        string
	BeforeRevision int64
	Limit          int32
}

// SourceJournalHead is one row of pc_source_journal_heads: the per-scope high-watermark.
type SourceJournalHead struct {
	ScopeID   string
	Position  int64
	UpdatedAt time.Time
}

// Source is one row of pc_sources.
type Source struct {
	ScopeID         string
	JournalPosition int64
	SourceID        string
	SourceType      string
	Content         string
	Metadata        []byte // compact JSON object
	CreatedAt       time.Time
	// ErasedAt is when the Source was forgotten (zero = NULL: it was not): its row stays as a tombstone holding the
	// journal position, with empty content and metadata {}.
	ErasedAt time.Time
}

// SourceCursor is one row of pc_source_cursors. A missing row reads as (0, 0).
type SourceCursor struct {
	ScopeID    string
	CursorName string
	Position   int64
	Generation int64
	UpdatedAt  time.Time
}

// MemoryEntry is one row of pc_memory_entries.
type MemoryEntry struct {
	ScopeID         string
	Revision        int64
	EntryNo         int32
	Content         string
	SourcePositions []byte // JSON array of journal positions
	CreatedAt       time.Time
	// EntryID is the entry's stable id within its scope, kept across revisions (docs/memory.md#entry-ids); 0 = NULL:
	// an entry written before ids existed or by an older build.
	EntryID int64
}

// ExperienceCandidate is one row of pc_experience_candidates.
type ExperienceCandidate struct {
	CandidateID    string
	ScopeID        string
	WorkID         string
	Title          string
	Lesson         string
	CitedPositions []byte // JSON array of journal positions
	Status         string // pending | approved | rejected
	StateVersion   int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}
