package conv

import (
	"time"

	"github.com/powercontext/powercontext/db"
)

// The shapes below are the generated structs of the ledger tables, identical on the three engines but for T.

type workItem[T Time] = struct {
	WorkID                 string
	LogicalKey             string
	LaneKey                string
	LaneSequence           int64
	Kind                   string
	PayloadVersion         int32
	ScopeID                string
	Payload                []byte
	Status                 string
	AvailableAt            T
	LeaseOwner             *string
	LeaseFence             int64
	LeaseExpiresAt         *T
	AttemptCount           int32
	GenerationAttemptCount int32
	RecoveryGeneration     int32
	MaxAttempts            int32
	CancelRequested        bool
	ResultCode             *string
	ResultPayload          []byte
	ErrorCategory          *string
	ErrorCode              *string
	StateVersion           int64
	CreatedAt              T
	UpdatedAt              T
	CompletedAt            *T
}

type workItemUpdateState[T Time] = struct {
	Status                 string
	AvailableAt            T
	LeaseOwner             *string
	LeaseFence             int64
	LeaseExpiresAt         *T
	AttemptCount           int32
	GenerationAttemptCount int32
	RecoveryGeneration     int32
	MaxAttempts            int32
	CancelRequested        bool
	ResultCode             *string
	ResultPayload          []byte
	ErrorCategory          *string
	ErrorCode              *string
	StateVersion           int64
	UpdatedAt              T
	CompletedAt            *T
	WorkID                 string
	ExpectedVersion        int64
}

type workItemExtendLease[T Time] = struct {
	LeaseExpiresAt *T
	WorkID         string
	LeaseOwner     *string
	LeaseFence     int64
	AttemptCount   int32
}

type workItemPurgeCandidates[T Time] = struct {
	CompletedBefore *T
	Limit           int32
}

type claimCandidate = struct {
	WorkID         string
	LaneKey        string
	LogicalKey     string
	LaneSequence   int64
	Kind           string
	PayloadVersion int32
	Status         string
}

type kindVersionCount = struct {
	Kind           string
	PayloadVersion int32
	ItemCount      int64
}

type queueStatistic[T Time] = struct {
	Kind            string
	Status          string
	ItemCount       int64
	OldestCreatedAt T
}

type workAttempt[T Time] = struct {
	WorkID             string
	AttemptNo          int32
	RecoveryGeneration int32
	OwnerID            string
	Fence              int64
	StartedAt          T
	HeartbeatAt        *T
	FinishedAt         *T
	Outcome            *string
	ErrorCategory      *string
	ErrorCode          *string
	TraceID            *string
	SpanID             *string
}

type workAttemptFinish[T Time] = struct {
	FinishedAt    *T
	Outcome       *string
	ErrorCategory *string
	ErrorCode     *string
	WorkID        string
	AttemptNo     int32
}

type workAttemptHeartbeat[T Time] = struct {
	HeartbeatAt *T
	WorkID      string
	AttemptNo   int32
}

type workLane = struct {
	LaneKey      string
	NextSequence int64
	HeadSequence *int64
}

type workLaneLock[T Time] = struct {
	LaneKey      string
	NextSequence int64
	HeadSequence *int64
	DbNow        T
}

type workLaneUpdate = struct {
	NextSequence int64
	HeadSequence *int64
	LaneKey      string
}

type workKey[T Time] = struct {
	LogicalKey string
	WorkID     string
	LaneKey    string
	CreatedAt  T
}

type schedulerLease[T Time] = struct {
	LeaseName      string
	OwnerID        *string
	Fence          int64
	LeaseExpiresAt *T
	UpdatedAt      T
}

type schedulerLeaseUpdate[T Time] = struct {
	OwnerID        *string
	Fence          int64
	LeaseExpiresAt *T
	UpdatedAt      T
	LeaseName      string
}

type schedulerScan[T Time] = struct {
	Discoverer   string
	NextRunAt    T
	Continuation *string
	StateVersion int64
	UpdatedAt    T
}

type schedulerScanUpdate[T Time] = struct {
	NextRunAt       T
	Continuation    *string
	UpdatedAt       T
	Discoverer      string
	ExpectedVersion int64
}

type runtimeMember[T Time] = struct {
	MemberID         string
	Role             string
	BuildVersion     string
	SchemaMin        int64
	SchemaMax        int64
	PayloadMin       int32
	PayloadMax       int32
	BehaviorRevision string
	StartedAt        T
	HeartbeatAt      T
	ExpiresAt        T
}

type rateLimitWindow[T Time] = struct {
	PrincipalKey    string
	PolicyID        string
	WindowStartedAt T
	RequestCount    int32
	ExpiresAt       T
}

type rateLimitWindowKey[T Time] = struct {
	PrincipalKey    string
	PolicyID        string
	WindowStartedAt T
}

// neutralRateLimitWindowKey is the shape of db.RateLimitWindowLockParams and db.RateLimitWindowIncrementParams.
type neutralRateLimitWindowKey = struct {
	PrincipalKey    string
	PolicyID        string
	WindowStartedAt time.Time
}

type purgeExpired[T Time] = struct {
	ExpiredBefore T
	Limit         int32
}

// neutralPurgeExpired is the shape of db.RuntimeMemberPurgeExpiredParams, db.RateLimitWindowPurgeExpiredParams and
// db.UISessionPurgeExpiredParams.
type neutralPurgeExpired = struct {
	ExpiredBefore time.Time
	Limit         int32
}

// WorkItemFromGen converts a pc_work_items row.
func WorkItemFromGen[T Time, R ~workItem[T]](g R) db.WorkItem {
	r := workItem[T](g)
	return db.WorkItem{
		WorkID:                 r.WorkID,
		LogicalKey:             r.LogicalKey,
		LaneKey:                r.LaneKey,
		LaneSequence:           r.LaneSequence,
		Kind:                   r.Kind,
		PayloadVersion:         r.PayloadVersion,
		ScopeID:                r.ScopeID,
		Payload:                r.Payload,
		Status:                 r.Status,
		AvailableAt:            TimeFromGen(r.AvailableAt),
		LeaseOwner:             TextFromGen(r.LeaseOwner),
		LeaseFence:             r.LeaseFence,
		LeaseExpiresAt:         nullTimeFromGen(r.LeaseExpiresAt),
		AttemptCount:           r.AttemptCount,
		GenerationAttemptCount: r.GenerationAttemptCount,
		RecoveryGeneration:     r.RecoveryGeneration,
		MaxAttempts:            r.MaxAttempts,
		CancelRequested:        r.CancelRequested,
		ResultCode:             TextFromGen(r.ResultCode),
		ResultPayload:          r.ResultPayload,
		ErrorCategory:          TextFromGen(r.ErrorCategory),
		ErrorCode:              TextFromGen(r.ErrorCode),
		StateVersion:           r.StateVersion,
		CreatedAt:              TimeFromGen(r.CreatedAt),
		UpdatedAt:              TimeFromGen(r.UpdatedAt),
		CompletedAt:            nullTimeFromGen(r.CompletedAt),
	}
}

// WorkItemToGen builds the parameters of WorkItemInsert.
func WorkItemToGen[P ~workItem[T], T Time](i db.WorkItem) P {
	return P(workItem[T]{
		WorkID:                 i.WorkID,
		LogicalKey:             i.LogicalKey,
		LaneKey:                i.LaneKey,
		LaneSequence:           i.LaneSequence,
		Kind:                   i.Kind,
		PayloadVersion:         i.PayloadVersion,
		ScopeID:                i.ScopeID,
		Payload:                i.Payload,
		Status:                 i.Status,
		AvailableAt:            TimeToGen[T](i.AvailableAt),
		LeaseOwner:             TextToGen(i.LeaseOwner),
		LeaseFence:             i.LeaseFence,
		LeaseExpiresAt:         nullTimeToGen[T](i.LeaseExpiresAt),
		AttemptCount:           i.AttemptCount,
		GenerationAttemptCount: i.GenerationAttemptCount,
		RecoveryGeneration:     i.RecoveryGeneration,
		MaxAttempts:            i.MaxAttempts,
		CancelRequested:        i.CancelRequested,
		ResultCode:             TextToGen(i.ResultCode),
		ResultPayload:          i.ResultPayload,
		ErrorCategory:          TextToGen(i.ErrorCategory),
		ErrorCode:              TextToGen(i.ErrorCode),
		StateVersion:           i.StateVersion,
		CreatedAt:              TimeToGen[T](i.CreatedAt),
		UpdatedAt:              TimeToGen[T](i.UpdatedAt),
		CompletedAt:            nullTimeToGen[T](i.CompletedAt),
	})
}

// WorkItemUpdateStateToGen builds the parameters of WorkItemUpdateState.
func WorkItemUpdateStateToGen[P ~workItemUpdateState[T], T Time](p db.WorkItemUpdateStateParams) P {
	i := p.Item
	return P(workItemUpdateState[T]{
		Status:                 i.Status,
		AvailableAt:            TimeToGen[T](i.AvailableAt),
		LeaseOwner:             TextToGen(i.LeaseOwner),
		LeaseFence:             i.LeaseFence,
		LeaseExpiresAt:         nullTimeToGen[T](i.LeaseExpiresAt),
		AttemptCount:           i.AttemptCount,
		GenerationAttemptCount: i.GenerationAttemptCount,
		RecoveryGeneration:     i.RecoveryGeneration,
		MaxAttempts:            i.MaxAttempts,
		CancelRequested:        i.CancelRequested,
		ResultCode:             TextToGen(i.ResultCode),
		ResultPayload:          i.ResultPayload,
		ErrorCategory:          TextToGen(i.ErrorCategory),
		ErrorCode:              TextToGen(i.ErrorCode),
		StateVersion:           i.StateVersion,
		UpdatedAt:              TimeToGen[T](i.UpdatedAt),
		CompletedAt:            nullTimeToGen[T](i.CompletedAt),
		WorkID:                 i.WorkID,
		ExpectedVersion:        p.ExpectedVersion,
	})
}

// WorkItemExtendLeaseToGen builds the parameters of WorkItemExtendLease.
func WorkItemExtendLeaseToGen[P ~workItemExtendLease[T], T Time](p db.WorkItemExtendLeaseParams) P {
	return P(workItemExtendLease[T]{
		LeaseExpiresAt: nullTimeToGen[T](p.LeaseExpiresAt),
		WorkID:         p.WorkID,
		LeaseOwner:     TextToGen(p.LeaseOwner),
		LeaseFence:     p.LeaseFence,
		AttemptCount:   p.AttemptCount,
	})
}

// WorkItemPurgeCandidatesToGen builds the parameters of WorkItemPurgeCandidates.
func WorkItemPurgeCandidatesToGen[P ~workItemPurgeCandidates[T], T Time](p db.WorkItemPurgeCandidatesParams) P {
	return P(workItemPurgeCandidates[T]{CompletedBefore: nullTimeToGen[T](p.CompletedBefore), Limit: p.Limit})
}

// ClaimCandidateFromGen converts a row of WorkItemClaimCandidates.
func ClaimCandidateFromGen[R ~claimCandidate](r R) db.ClaimCandidate { return db.ClaimCandidate(r) }

// KindVersionCountFromGen converts a row of WorkItemHeadKindVersions.
func KindVersionCountFromGen[R ~kindVersionCount](g R) db.KindVersionCount {
	r := kindVersionCount(g)
	return db.KindVersionCount{Kind: r.Kind, PayloadVersion: r.PayloadVersion, Count: r.ItemCount}
}

// QueueStatisticFromGen converts a row of WorkItemQueueStatistics.
func QueueStatisticFromGen[T Time, R ~queueStatistic[T]](g R) db.QueueStatistic {
	r := queueStatistic[T](g)
	return db.QueueStatistic{Kind: r.Kind, Status: r.Status, Count: r.ItemCount, OldestCreatedAt: TimeFromGen(r.OldestCreatedAt)}
}

// WorkAttemptFromGen converts a pc_work_attempts row.
func WorkAttemptFromGen[T Time, R ~workAttempt[T]](g R) db.WorkAttempt {
	r := workAttempt[T](g)
	return db.WorkAttempt{
		WorkID:             r.WorkID,
		AttemptNo:          r.AttemptNo,
		RecoveryGeneration: r.RecoveryGeneration,
		OwnerID:            r.OwnerID,
		Fence:              r.Fence,
		StartedAt:          TimeFromGen(r.StartedAt),
		HeartbeatAt:        nullTimeFromGen(r.HeartbeatAt),
		FinishedAt:         nullTimeFromGen(r.FinishedAt),
		Outcome:            TextFromGen(r.Outcome),
		ErrorCategory:      TextFromGen(r.ErrorCategory),
		ErrorCode:          TextFromGen(r.ErrorCode),
		TraceID:            TextFromGen(r.TraceID),
		SpanID:             TextFromGen(r.SpanID),
	}
}

// WorkAttemptToGen builds the parameters of WorkAttemptInsert.
func WorkAttemptToGen[P ~workAttempt[T], T Time](a db.WorkAttempt) P {
	return P(workAttempt[T]{
		WorkID:             a.WorkID,
		AttemptNo:          a.AttemptNo,
		RecoveryGeneration: a.RecoveryGeneration,
		OwnerID:            a.OwnerID,
		Fence:              a.Fence,
		StartedAt:          TimeToGen[T](a.StartedAt),
		HeartbeatAt:        nullTimeToGen[T](a.HeartbeatAt),
		FinishedAt:         nullTimeToGen[T](a.FinishedAt),
		Outcome:            TextToGen(a.Outcome),
		ErrorCategory:      TextToGen(a.ErrorCategory),
		ErrorCode:          TextToGen(a.ErrorCode),
		TraceID:            TextToGen(a.TraceID),
		SpanID:             TextToGen(a.SpanID),
	})
}

// WorkAttemptFinishToGen builds the parameters of WorkAttemptFinish.
func WorkAttemptFinishToGen[P ~workAttemptFinish[T], T Time](p db.WorkAttemptFinishParams) P {
	return P(workAttemptFinish[T]{
		FinishedAt:    nullTimeToGen[T](p.FinishedAt),
		Outcome:       TextToGen(p.Outcome),
		ErrorCategory: TextToGen(p.ErrorCategory),
		ErrorCode:     TextToGen(p.ErrorCode),
		WorkID:        p.WorkID,
		AttemptNo:     p.AttemptNo,
	})
}

// WorkAttemptHeartbeatToGen builds the parameters of WorkAttemptHeartbeat.
func WorkAttemptHeartbeatToGen[P ~workAttemptHeartbeat[T], T Time](p db.WorkAttemptHeartbeatParams) P {
	return P(workAttemptHeartbeat[T]{HeartbeatAt: nullTimeToGen[T](p.HeartbeatAt), WorkID: p.WorkID, AttemptNo: p.AttemptNo})
}

// WorkLaneFromGen converts a pc_work_lanes row.
func WorkLaneFromGen[R ~workLane](g R) db.WorkLane {
	r := workLane(g)
	return db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: seqFromGen(r.HeadSequence)}
}

// WorkLaneLockFromGen converts the lane of a WorkLaneLock row (its DbNow is read by Locked).
func WorkLaneLockFromGen[T Time, R ~workLaneLock[T]](g R) db.WorkLane {
	r := workLaneLock[T](g)
	return WorkLaneFromGen(workLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: r.HeadSequence})
}

// JoinedLaneItemFromGen converts the result of a read of lane and item in one statement (MySQL, SQLite), the lane's
// columns given one by one: either row missing is db.ErrNotFound.
func JoinedLaneItemFromGen[T Time, R ~workItem[T]](e Errors, laneKey string, next int64, head *int64, item R, now T, err error) (db.WorkLane, db.WorkItem, time.Time, error) {
	if err != nil {
		return db.WorkLane{}, db.WorkItem{}, time.Time{}, e(err)
	}
	return WorkLaneFromGen(workLane{LaneKey: laneKey, NextSequence: next, HeadSequence: head}), WorkItemFromGen[T](item), TimeFromGen(now), nil
}

// WorkLaneUpdateToGen builds the parameters of WorkLaneUpdate.
func WorkLaneUpdateToGen[P ~workLaneUpdate](l db.WorkLane) P {
	return P(workLaneUpdate{NextSequence: l.NextSequence, HeadSequence: seqToGen(l.HeadSequence), LaneKey: l.LaneKey})
}

// WorkKeyFromGen converts a pc_work_keys row.
func WorkKeyFromGen[T Time, R ~workKey[T]](g R) db.WorkKey {
	r := workKey[T](g)
	return db.WorkKey{LogicalKey: r.LogicalKey, WorkID: r.WorkID, LaneKey: r.LaneKey, CreatedAt: TimeFromGen(r.CreatedAt)}
}

// WorkKeyToGen builds the parameters of WorkKeyInsertIfAbsent.
func WorkKeyToGen[P ~workKey[T], T Time](k db.WorkKey) P {
	return P(workKey[T]{LogicalKey: k.LogicalKey, WorkID: k.WorkID, LaneKey: k.LaneKey, CreatedAt: TimeToGen[T](k.CreatedAt)})
}

// SchedulerLeaseFromGen converts a pc_scheduler_leases row.
func SchedulerLeaseFromGen[T Time, R ~schedulerLease[T]](g R) db.SchedulerLease {
	r := schedulerLease[T](g)
	return db.SchedulerLease{
		LeaseName:      r.LeaseName,
		OwnerID:        TextFromGen(r.OwnerID),
		Fence:          r.Fence,
		LeaseExpiresAt: nullTimeFromGen(r.LeaseExpiresAt),
		UpdatedAt:      TimeFromGen(r.UpdatedAt),
	}
}

// SchedulerLeaseUpdateToGen builds the parameters of SchedulerLeaseUpdate.
func SchedulerLeaseUpdateToGen[P ~schedulerLeaseUpdate[T], T Time](l db.SchedulerLease) P {
	return P(schedulerLeaseUpdate[T]{
		OwnerID:        TextToGen(l.OwnerID),
		Fence:          l.Fence,
		LeaseExpiresAt: nullTimeToGen[T](l.LeaseExpiresAt),
		UpdatedAt:      TimeToGen[T](l.UpdatedAt),
		LeaseName:      l.LeaseName,
	})
}

// SchedulerScanFromGen converts a pc_scheduler_scans row.
func SchedulerScanFromGen[T Time, R ~schedulerScan[T]](g R) db.SchedulerScan {
	r := schedulerScan[T](g)
	return db.SchedulerScan{
		Discoverer:   r.Discoverer,
		NextRunAt:    TimeFromGen(r.NextRunAt),
		Continuation: TextFromGen(r.Continuation),
		StateVersion: r.StateVersion,
		UpdatedAt:    TimeFromGen(r.UpdatedAt),
	}
}

// SchedulerScanToGen builds the parameters of SchedulerScanInsertIfAbsent.
func SchedulerScanToGen[P ~schedulerScan[T], T Time](s db.SchedulerScan) P {
	return P(schedulerScan[T]{
		Discoverer:   s.Discoverer,
		NextRunAt:    TimeToGen[T](s.NextRunAt),
		Continuation: TextToGen(s.Continuation),
		StateVersion: s.StateVersion,
		UpdatedAt:    TimeToGen[T](s.UpdatedAt),
	})
}

// SchedulerScanUpdateToGen builds the parameters of SchedulerScanUpdate.
func SchedulerScanUpdateToGen[P ~schedulerScanUpdate[T], T Time](p db.SchedulerScanUpdateParams) P {
	return P(schedulerScanUpdate[T]{
		NextRunAt:       TimeToGen[T](p.Scan.NextRunAt),
		Continuation:    TextToGen(p.Scan.Continuation),
		UpdatedAt:       TimeToGen[T](p.Scan.UpdatedAt),
		Discoverer:      p.Scan.Discoverer,
		ExpectedVersion: p.ExpectedVersion,
	})
}

// RuntimeMemberFromGen converts a pc_runtime_members row.
func RuntimeMemberFromGen[T Time, R ~runtimeMember[T]](g R) db.RuntimeMember {
	r := runtimeMember[T](g)
	return db.RuntimeMember{
		MemberID:         r.MemberID,
		Role:             r.Role,
		BuildVersion:     r.BuildVersion,
		SchemaMin:        r.SchemaMin,
		SchemaMax:        r.SchemaMax,
		PayloadMin:       r.PayloadMin,
		PayloadMax:       r.PayloadMax,
		BehaviorRevision: r.BehaviorRevision,
		StartedAt:        TimeFromGen(r.StartedAt),
		HeartbeatAt:      TimeFromGen(r.HeartbeatAt),
		ExpiresAt:        TimeFromGen(r.ExpiresAt),
	}
}

// RuntimeMemberToGen builds the parameters of RuntimeMemberUpsert.
func RuntimeMemberToGen[P ~runtimeMember[T], T Time](m db.RuntimeMember) P {
	return P(runtimeMember[T]{
		MemberID:         m.MemberID,
		Role:             m.Role,
		BuildVersion:     m.BuildVersion,
		SchemaMin:        m.SchemaMin,
		SchemaMax:        m.SchemaMax,
		PayloadMin:       m.PayloadMin,
		PayloadMax:       m.PayloadMax,
		BehaviorRevision: m.BehaviorRevision,
		StartedAt:        TimeToGen[T](m.StartedAt),
		HeartbeatAt:      TimeToGen[T](m.HeartbeatAt),
		ExpiresAt:        TimeToGen[T](m.ExpiresAt),
	})
}

// PurgeExpiredToGen builds the parameters of RuntimeMemberPurgeExpired, RateLimitWindowPurgeExpired and
// UISessionPurgeExpired.
func PurgeExpiredToGen[P ~purgeExpired[T], T Time, N ~neutralPurgeExpired](n N) P {
	p := neutralPurgeExpired(n)
	return P(purgeExpired[T]{ExpiredBefore: TimeToGen[T](p.ExpiredBefore), Limit: p.Limit})
}

// RateLimitWindowFromGen converts a pc_rate_limit_windows row.
func RateLimitWindowFromGen[T Time, R ~rateLimitWindow[T]](g R) db.RateLimitWindow {
	r := rateLimitWindow[T](g)
	return db.RateLimitWindow{
		PrincipalKey:    r.PrincipalKey,
		PolicyID:        r.PolicyID,
		WindowStartedAt: TimeFromGen(r.WindowStartedAt),
		RequestCount:    r.RequestCount,
		ExpiresAt:       TimeFromGen(r.ExpiresAt),
	}
}

// RateLimitWindowToGen builds the parameters of RateLimitWindowInsertIfAbsent.
func RateLimitWindowToGen[P ~rateLimitWindow[T], T Time](w db.RateLimitWindow) P {
	return P(rateLimitWindow[T]{
		PrincipalKey:    w.PrincipalKey,
		PolicyID:        w.PolicyID,
		WindowStartedAt: TimeToGen[T](w.WindowStartedAt),
		RequestCount:    w.RequestCount,
		ExpiresAt:       TimeToGen[T](w.ExpiresAt),
	})
}

// RateLimitWindowKeyToGen builds the parameters of RateLimitWindowLock and RateLimitWindowIncrement.
func RateLimitWindowKeyToGen[P ~rateLimitWindowKey[T], T Time, N ~neutralRateLimitWindowKey](n N) P {
	k := neutralRateLimitWindowKey(n)
	return P(rateLimitWindowKey[T]{PrincipalKey: k.PrincipalKey, PolicyID: k.PolicyID, WindowStartedAt: TimeToGen[T](k.WindowStartedAt)})
}
