"""Wire types of the HTTP API (api/openapi.yaml), as dataclasses. Times are ``datetime`` in UTC."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

__all__ = [
    "OperationStatus",
    "OperationKind",
    "CandidateStatus",
    "Metadata",
    "CaptureResult",
    "SourceRecord",
    "SourceList",
    "MemoryRevision",
    "FlushResult",
    "IncubateResult",
    "MemoryEntry",
    "Memory",
    "MemoryRevisionInfo",
    "MemoryRevisionList",
    "MemoryChange",
    "MemoryDiff",
    "ContextItem",
    "Context",
    "OperationError",
    "MemoryFlushOperationResult",
    "ExperienceIncubationOperationResult",
    "OperationRecord",
    "OperationList",
    "Candidate",
    "VersionRange",
    "Member",
    "Health",
    "ImportCounts",
    "ImportScopeResult",
    "Skill",
    "SkillRevision",
    "SkillTarget",
    "RegisteredSkillTarget",
    "SkillPublication",
    "TERMINAL_STATUSES",
    "parse_time",
]

OperationStatus = Literal["queued", "running", "retry_wait", "cancelling", "succeeded", "failed", "cancelled"]
OperationKind = Literal["memory_flush", "experience_incubation"]
CandidateStatus = Literal["pending", "approved", "rejected"]

#: Statuses after which an operation changes no more (unless retried).
TERMINAL_STATUSES = frozenset({"succeeded", "failed", "cancelled"})


class Metadata(TypedDict, total=False):
    """Free-form Source metadata: any JSON object of at most 16 KiB."""


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """Parses the API's RFC 3339 UTC time (``2026-12-02T13:00:00.123456Z``); None stays None."""
    if value is None:
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def _time(value: Any) -> datetime:
    t = parse_time(value)
    if t is None:
        raise ValueError("a time is required")
    return t


@dataclass(frozen=True)
class CaptureResult:
    """Answer of a capture: the Source's journal position; ``created`` is False for a repeated source id."""

    scope_id: str
    source_id: str
    journal_position: int
    created: bool

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "CaptureResult":
        return cls(d["scope_id"], d["source_id"], int(d["journal_position"]), bool(d["created"]))


@dataclass(frozen=True)
class SourceRecord:
    scope_id: str
    source_id: str
    journal_position: int
    source_type: str
    content: str
    metadata: Dict[str, Any]
    created_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SourceRecord":
        return cls(d["scope_id"], d["source_id"], int(d["journal_position"]), d["source_type"], d["content"],
                   dict(d.get("metadata") or {}), _time(d["created_at"]))


@dataclass(frozen=True)
class SourceList:
    """One page of a journal; pass ``next_after`` as ``after`` for the next page (None on the last page)."""

    items: List[SourceRecord]
    next_after: Optional[int]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SourceList":
        return cls([SourceRecord.from_json(x) for x in d["items"]], d.get("next_after"))


@dataclass(frozen=True)
class MemoryRevision:
    revision: int

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> Optional["MemoryRevision"]:
        return None if d is None else cls(int(d["revision"]))


@dataclass(frozen=True)
class FlushResult:
    """A completed flush: ``idle`` (nothing was pending) or ``processed`` (the window was committed)."""

    status: Literal["idle", "processed"]
    previous_cursor: int
    current_cursor: int
    high_watermark: int
    processed_source_count: int
    memory: Optional[MemoryRevision]
    operation_id: Optional[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "FlushResult":
        return cls(d["status"], int(d["previous_cursor"]), int(d["current_cursor"]), int(d["high_watermark"]),
                   int(d["processed_source_count"]), MemoryRevision.from_json(d.get("memory")), d.get("operation_id"))


@dataclass(frozen=True)
class IncubateResult:
    """A completed experience incubation: ``idle`` (nothing was pending; ``operation_id`` None) or ``processed``
    (the window was committed), with ``candidate_count`` pending candidates proposed from its task outcomes."""

    status: Literal["idle", "processed"]
    previous_cursor: int
    current_cursor: int
    high_watermark: int
    processed_source_count: int
    candidate_count: int
    operation_id: Optional[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "IncubateResult":
        return cls(d["status"], int(d["previous_cursor"]), int(d["current_cursor"]), int(d["high_watermark"]),
                   int(d["processed_source_count"]), int(d.get("candidate_count") or 0), d.get("operation_id"))


def _optional_int(v: Any) -> Optional[int]:
    return None if v is None else int(v)


@dataclass(frozen=True)
class MethodScores:
    """An entry's score by each ranking method that matched it: ``fts`` (BM25 relevance to the query's terms) and
    ``semantic`` (cosine similarity of the entry's vector and the query's); None where that method did not match it
    or did not run."""

    fts: Optional[float] = None
    semantic: Optional[float] = None

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> "Optional[MethodScores]":
        if d is None:
            return None
        fts, semantic = d.get("fts"), d.get("semantic")
        return cls(None if fts is None else float(fts), None if semantic is None else float(semantic))


@dataclass(frozen=True)
class MemoryEntry:
    """One fact: ``entry_no`` is its place in the revision, ``entry_id`` its stable id in the scope — kept while
    the entry is carried over, restated or superseded; None for an entry an older server build wrote."""

    entry_no: int
    content: str
    source_positions: List[int]
    #: Relevance in search results in the search's mode (higher is better): BM25 (fts), cosine similarity
    #: (semantic) or the reciprocal-rank-fusion sum (hybrid); None outside a search.
    score: Optional[float] = None
    entry_id: Optional[int] = None
    #: The entry's scores by method (search results only).
    scores: Optional[MethodScores] = None

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "MemoryEntry":
        score = d.get("score")
        return cls(int(d["entry_no"]), d["content"], [int(p) for p in d.get("source_positions") or []],
                   None if score is None else float(score), _optional_int(d.get("entry_id")),
                   MethodScores.from_json(d.get("scores")))


@dataclass(frozen=True)
class Eviction:
    """What the 500-entry cap dropped when a revision was written: ``count`` entries, ``entry_ids`` their ids
    (least recently confirmed first)."""

    count: int
    entry_ids: List[int]

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> Optional["Eviction"]:
        if d is None:
            return None
        return cls(int(d["count"]), [int(i) for i in d.get("entry_ids") or []])


@dataclass(frozen=True)
class Memory:
    """A scope's Memory revision; ``revision`` and ``created_at`` are None while nothing was committed.
    ``evicted`` is None then too, and for a revision an older server build wrote."""

    scope_id: str
    revision: Optional[int]
    created_at: Optional[datetime]
    entries: List[MemoryEntry]
    evicted: Optional[Eviction] = None
    #: Search only: the ranking that ran (``"fts"``, ``"semantic"`` or ``"hybrid"``).
    mode: Optional[str] = None
    #: Search only: True when a vector mode fell back to full text because the query could not be embedded in time.
    degraded: bool = False

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Memory":
        return cls(d["scope_id"], d.get("revision"), parse_time(d.get("created_at")),
                   [MemoryEntry.from_json(e) for e in d.get("entries") or []], Eviction.from_json(d.get("evicted")),
                   d.get("mode"), bool(d.get("degraded")))


@dataclass(frozen=True)
class OperationError:
    """The bounded failure of an operation: never error text."""

    category: str
    code: str


@dataclass(frozen=True)
class MemoryRevisionInfo:
    """One committed revision of a scope's Memory: it consumed journal positions (window_after, window_through]
    (a redaction consumes none) and was written by Operation ``operation_id``; ``evicted`` is what the entry cap
    dropped (None for a revision an older server build wrote)."""

    revision: int
    created_at: datetime
    entry_count: int
    window_after: int
    window_through: int
    operation_id: str
    evicted: Optional[Eviction] = None

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "MemoryRevisionInfo":
        return cls(int(d["revision"]), _time(d["created_at"]), int(d["entry_count"]), int(d["window_after"]),
                   int(d["window_through"]), d["operation_id"], Eviction.from_json(d.get("evicted")))


@dataclass(frozen=True)
class MemoryRevisionList:
    """One page of revisions, newest first; pass ``next_cursor`` as ``cursor`` for the next page."""

    items: List[MemoryRevisionInfo]
    next_cursor: Optional[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "MemoryRevisionList":
        return cls([MemoryRevisionInfo.from_json(x) for x in d["items"]], d.get("next_cursor"))


@dataclass(frozen=True)
class MemoryChange:
    """An entry matched in both revisions (by ``entry_id`` when both have ids) whose text or source positions
    differ: ``from_`` is the entry in the older revision, ``to`` in the newer one. The names are the wire's
    (``from``/``to``, as in the TypeScript client); ``from`` is a Python keyword, hence ``from_``."""

    from_: MemoryEntry
    to: MemoryEntry


@dataclass(frozen=True)
class MemoryDiff:
    """What changed from revision ``from_`` (0: the empty Memory) to revision ``to``: the wire's ``from`` and
    ``to`` (``from`` is a Python keyword, hence ``from_``)."""

    scope_id: str
    from_: int
    to: int
    added: List[MemoryEntry]
    removed: List[MemoryEntry]
    changed: List[MemoryChange]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "MemoryDiff":
        return cls(d["scope_id"], int(d["from"]), int(d["to"]),
                   [MemoryEntry.from_json(e) for e in d.get("added") or []],
                   [MemoryEntry.from_json(e) for e in d.get("removed") or []],
                   [MemoryChange(MemoryEntry.from_json(c["from"]), MemoryEntry.from_json(c["to"]))
                    for c in d.get("changed") or []])


@dataclass(frozen=True)
class ContextItem:
    """A Memory entry (``type == "memory"``, with ``entry_no`` and, unless an older server build wrote it,
    ``entry_id``) or an approved lesson (``type == "lesson"``, with ``candidate_id`` and ``title``) chosen for an
    agent's context, with its estimated ``tokens``."""

    type: Literal["memory", "lesson"]
    content: str
    source_positions: List[int]
    score: float
    tokens: int
    entry_no: Optional[int] = None
    candidate_id: Optional[str] = None
    title: Optional[str] = None
    entry_id: Optional[int] = None
    #: A memory item's scores by method, when it matched ``q``.
    scores: Optional[MethodScores] = None

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ContextItem":
        return cls(d["type"], d["content"], [int(p) for p in d.get("source_positions") or []],
                   float(d.get("score") or 0), int(d["tokens"]), d.get("entry_no"), d.get("candidate_id"),
                   d.get("title"), _optional_int(d.get("entry_id")),
                   MethodScores.from_json(d.get("scores")))


@dataclass(frozen=True)
class Context:
    """The scope's context within a token budget (GET /v1/context): ``used_tokens <= max_tokens``; ``omitted``
    counts the items that did not fit."""

    scope_id: str
    revision: Optional[int]
    max_tokens: int
    used_tokens: int
    omitted: int
    items: List[ContextItem]
    #: The ranking of the Memory entries (``"fts"``, ``"semantic"`` or ``"hybrid"``).
    mode: str = "fts"
    #: True when a vector mode fell back to full text because ``q`` could not be embedded in time.
    degraded: bool = False

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Context":
        return cls(d["scope_id"], d.get("revision"), int(d["max_tokens"]), int(d["used_tokens"]),
                   int(d.get("omitted") or 0), [ContextItem.from_json(x) for x in d.get("items") or []],
                   d.get("mode") or "fts", bool(d.get("degraded")))


@dataclass(frozen=True)
class EmbeddingStats:
    """How a revision's entry vectors were made: ``computed`` by the embedder, ``reused`` for text the model had
    already embedded, ``missing`` when the embedder failed (full-text only until re-embedded)."""

    model: str
    computed: int
    reused: int
    missing: int

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> "Optional[EmbeddingStats]":
        if d is None:
            return None
        return cls(str(d["model"]), int(d["computed"]), int(d["reused"]), int(d["missing"]))


@dataclass(frozen=True)
class MemoryFlushOperationResult:
    previous_cursor: int
    current_cursor: int
    high_watermark: int
    processed_source_count: int
    memory: Optional[MemoryRevision]
    type: Literal["memory_flush"] = "memory_flush"
    #: The new revision's entry vectors (None when embeddings are off).
    embeddings: Optional[EmbeddingStats] = None


@dataclass(frozen=True)
class ExperienceIncubationOperationResult:
    previous_cursor: int
    current_cursor: int
    high_watermark: int
    processed_source_count: int
    candidate_count: int
    type: Literal["experience_incubation"] = "experience_incubation"


@dataclass(frozen=True)
class OtherOperationResult:
    """The result of another kind (memory_redact, memory_embed, scope_erase, scope_export, scope_import,
    maintenance, a skipped window): its fields as sent."""

    type: str
    fields: Dict[str, Any]


OperationResult = Union[MemoryFlushOperationResult, ExperienceIncubationOperationResult, OtherOperationResult]


@dataclass(frozen=True)
class ForgetResult:
    """Answer of forget_source: ``operation_id`` is the memory_redact operation that removes the Source from Memory
    (None when Memory had not consumed it)."""

    scope_id: str
    source_id: str
    journal_position: int
    operation_id: Optional[str]
    status: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ForgetResult":
        return cls(d["scope_id"], d["source_id"], int(d["journal_position"]), d.get("operation_id"), d["status"])


@dataclass(frozen=True)
class EraseResult:
    """Answer of erase_scope: the scope_erase operation."""

    scope_id: str
    operation_id: str
    status: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EraseResult":
        return cls(d["scope_id"], d["operation_id"], d["status"])


def _operation_result(d: Optional[Dict[str, Any]]) -> Optional[OperationResult]:
    if d is None:
        return None
    if d.get("type") not in ("memory_flush", "experience_incubation") or "skipped_source_count" in d:
        return OtherOperationResult(str(d.get("type")), dict(d))
    common = (int(d["previous_cursor"]), int(d["current_cursor"]), int(d["high_watermark"]),
              int(d["processed_source_count"]))
    if d.get("type") == "experience_incubation":
        return ExperienceIncubationOperationResult(*common, int(d["candidate_count"]))
    return MemoryFlushOperationResult(*common, MemoryRevision.from_json(d.get("memory")),
                                      embeddings=EmbeddingStats.from_json(d.get("embeddings")))


@dataclass(frozen=True)
class OperationRecord:
    """One Operation (public kinds only). ``state_version`` is the ``expected_version`` of cancel and retry."""

    operation_id: str
    kind: str
    scope_id: str
    status: str
    attempt_count: int = 0
    state_version: int = 0
    created_at: Optional[datetime] = None
    updated_at: Optional[datetime] = None
    completed_at: Optional[datetime] = None
    available_at: Optional[datetime] = None
    result: Optional[OperationResult] = None
    error: Optional[OperationError] = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OperationRecord":
        err = d.get("error")
        return cls(d["operation_id"], d["kind"], d["scope_id"], d["status"], int(d.get("attempt_count") or 0),
                   int(d.get("state_version") or 0), parse_time(d.get("created_at")),
                   parse_time(d.get("updated_at")), parse_time(d.get("completed_at")),
                   parse_time(d.get("available_at")), _operation_result(d.get("result")),
                   None if err is None else OperationError(err.get("category", ""), err.get("code", "")))


@dataclass(frozen=True)
class OperationList:
    """One page of Operations, newest first; pass ``next_cursor`` as ``cursor`` for the next page."""

    items: List[OperationRecord]
    next_cursor: Optional[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OperationList":
        return cls([OperationRecord.from_json(x) for x in d["items"]], d.get("next_cursor"))


@dataclass(frozen=True)
class Candidate:
    """A proposed Experience lesson awaiting review."""

    candidate_id: str
    scope_id: str
    operation_id: str
    title: str
    lesson: str
    cited_positions: List[int]
    status: str
    state_version: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Candidate":
        return cls(d["candidate_id"], d["scope_id"], d["operation_id"], d["title"], d["lesson"],
                   [int(p) for p in d.get("cited_positions") or []], d["status"], int(d["state_version"]),
                   _time(d["created_at"]), _time(d["updated_at"]))


@dataclass(frozen=True)
class VersionRange:
    min: int
    max: int


@dataclass(frozen=True)
class Member:
    """A live runtime member (process). No secrets."""

    member_id: str
    role: str
    build_version: str
    schema_versions: VersionRange
    payload_versions: VersionRange
    behavior_revision: str
    started_at: datetime
    heartbeat_at: datetime
    expires_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Member":
        def rng(r: Dict[str, Any]) -> VersionRange:
            return VersionRange(int(r["min"]), int(r["max"]))

        return cls(d["member_id"], d["role"], d["build_version"], rng(d["schema_versions"]),
                   rng(d["payload_versions"]), d["behavior_revision"], _time(d["started_at"]),
                   _time(d["heartbeat_at"]), _time(d["expires_at"]))


@dataclass(frozen=True)
class Health:
    """Readiness: ``ready`` | ``degraded`` (serving) or ``not_ready`` | ``misconfigured``, with every check."""

    status: str
    checks: Dict[str, Any] = field(default_factory=dict)

    @property
    def serving(self) -> bool:
        return self.status in ("ready", "degraded")


@dataclass(frozen=True)
class ImportCounts:
    """The records an import wrote."""

    sources: int
    tombstones: int
    cursors: int
    revisions: int
    entries: int
    embeddings: int
    candidates: int

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ImportCounts":
        return cls(*(int(d.get(k) or 0) for k in ("sources", "tombstones", "cursors", "revisions", "entries",
                                                    "embeddings", "candidates")))


@dataclass(frozen=True)
class ImportScopeResult:
    """Answer of import_scope (POST /v1/scopes/{id}/import): what was written and the scope_import operation."""

    scope_id: str
    source_scope_id: str
    counts: ImportCounts
    operation_id: str
    status_url: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ImportScopeResult":
        return cls(d["scope_id"], d["source_scope_id"], ImportCounts.from_json(d.get("counts") or {}),
                   d.get("operation_id") or "", d.get("status_url") or "")


@dataclass(frozen=True)
class Skill:
    """One skill of a scope (docs/skills.md)."""

    scope_id: str
    name: str
    current_revision: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Skill":
        return cls(d["scope_id"], d["name"], int(d["current_revision"]), _time(d["created_at"]),
                   _time(d["updated_at"]))


@dataclass(frozen=True)
class SkillRevision:
    """One revision of a skill; the digests are SHA-256 in hex."""

    revision: int
    tree_digest: str
    archive_digest: str
    file_count: int
    byte_size: int
    source_candidate_ids: List[str]
    created_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SkillRevision":
        return cls(int(d["revision"]), d["tree_digest"], d["archive_digest"], int(d["file_count"]),
                   int(d["byte_size"]), list(d.get("source_candidate_ids") or []), _time(d["created_at"]))


@dataclass(frozen=True)
class SkillTarget:
    """One agent installation (a skill target)."""

    target_id: str
    scope_id: str
    agent_kind: str
    display_name: str
    enrolled: bool
    enrollment_expires_at: Optional[datetime]
    revoked_at: Optional[datetime]
    generation: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SkillTarget":
        return cls(d["target_id"], d["scope_id"], d["agent_kind"], d["display_name"], bool(d["enrolled"]),
                   parse_time(d.get("enrollment_expires_at")), parse_time(d.get("revoked_at")),
                   int(d["generation"]), _time(d["created_at"]), _time(d["updated_at"]))


@dataclass(frozen=True)
class RegisteredSkillTarget:
    """A new target with its one-time enrollment token (only its SHA-256 is stored)."""

    target: SkillTarget
    enrollment_token: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RegisteredSkillTarget":
        return cls(SkillTarget.from_json(d["target"]), d["enrollment_token"])


@dataclass(frozen=True)
class SkillPublication:
    """The desired and observed state of one skill on one target."""

    target_id: str
    skill_name: str
    scope_id: str
    desired_state: str
    desired_revision: int
    observed_revision: Optional[int]
    observed_tree_digest: Optional[str]
    error_code: Optional[str]
    state: str
    generation: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SkillPublication":
        return cls(d["target_id"], d["skill_name"], d["scope_id"], d["desired_state"], int(d["desired_revision"]),
                   _optional_int(d.get("observed_revision")), d.get("observed_tree_digest"), d.get("error_code"),
                   d["state"], int(d["generation"]), _time(d["created_at"]), _time(d["updated_at"]))
