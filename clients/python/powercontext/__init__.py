"""Python client of the powercontext HTTP API: durable, scope-isolated context for agents.

Standard library only. See ``Client``; the wire contract is api/openapi.yaml in the powercontext repository.
"""

from .client import DEFAULT_OPERATION_DEADLINE, DEFAULT_POLL_INTERVAL, DEFAULT_TIMEOUT, Client
from .errors import (
    CODE_UNEXPECTED_RESPONSE,
    APIError,
    ConnectionFailedError,
    OperationFailedError,
    OperationPendingError,
    PowerContextError,
)
from .types import (
    Candidate,
    CaptureResult,
    Context,
    ContextItem,
    EraseResult,
    ExperienceIncubationOperationResult,
    ForgetResult,
    OtherOperationResult,
    FlushResult,
    Health,
    IncubateResult,
    Member,
    Memory,
    MemoryChange,
    MemoryDiff,
    MemoryEntry,
    MemoryRevision,
    MemoryRevisionInfo,
    MemoryRevisionList,
    OperationError,
    OperationList,
    OperationRecord,
    SourceList,
    SourceRecord,
)

__version__ = "0.1.0"

__all__ = [
    "Client",
    "DEFAULT_TIMEOUT",
    "DEFAULT_OPERATION_DEADLINE",
    "DEFAULT_POLL_INTERVAL",
    "PowerContextError",
    "APIError",
    "ConnectionFailedError",
    "OperationPendingError",
    "OperationFailedError",
    "CODE_UNEXPECTED_RESPONSE",
    "Candidate",
    "CaptureResult",
    "Context",
    "ContextItem",
    "EraseResult",
    "ExperienceIncubationOperationResult",
    "ForgetResult",
    "OtherOperationResult",
    "FlushResult",
    "Health",
    "IncubateResult",
    "Member",
    "Memory",
    "MemoryChange",
    "MemoryDiff",
    "MemoryEntry",
    "MemoryRevision",
    "MemoryRevisionInfo",
    "MemoryRevisionList",
    "OperationError",
    "OperationList",
    "OperationRecord",
    "SourceList",
    "SourceRecord",
]
