"""The HTTP client. Standard library only (urllib); safe to share between threads."""

from __future__ import annotations

import email.message
import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from .errors import (
    CODE_UNEXPECTED_RESPONSE,
    APIError,
    ConnectionFailedError,
    ExportIncompleteError,
    OperationFailedError,
    OperationPendingError,
)
from .tls import ssl_context
from .types import (
    Candidate,
    CaptureResult,
    Context,
    EraseResult,
    ExperienceIncubationOperationResult,
    ForgetResult,
    FlushResult,
    Health,
    ImportScopeResult,
    IncubateResult,
    Member,
    Memory,
    MemoryDiff,
    MemoryFlushOperationResult,
    MemoryRevisionList,
    OperationList,
    OperationRecord,
    RegisteredSkillTarget,
    Skill,
    SkillPublication,
    SkillRevision,
    SkillTarget,
    SourceList,
)

__all__ = ["Client", "DEFAULT_TIMEOUT", "DEFAULT_OPERATION_DEADLINE", "DEFAULT_POLL_INTERVAL"]

DEFAULT_TIMEOUT = 30.0  # seconds, per request
DEFAULT_OPERATION_DEADLINE = 30.0  # seconds, for flush_memory, incubate_experience and wait_operation
DEFAULT_POLL_INTERVAL = 0.2  # seconds between two polls of an operation
_MAX_RESPONSE_BYTES = 32 << 20
_MIN_POLL_BUDGET = 1.0
_USER_AGENT = "powercontext-python-client"
_MAX_TRAILER_BYTES = 1024  # a longer last line is not a trailer (the Go client's bound)

Progress = Callable[[OperationRecord], None]


class _Response:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: email.message.Message, body: bytes) -> None:
        self.status = status
        # Header names are case-insensitive: keep them lower-cased (the first of a repeated header wins).
        self.headers: Dict[str, str] = {}
        for name, value in headers.items():
            self.headers.setdefault(name.lower(), str(value))
        self.body = body

    def header(self, name: str) -> str:
        """The value of header ``name`` (any case), "" when absent."""
        return self.headers.get(name.lower(), "")

    def json(self, method: str, path: str) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise APIError(self.status, CODE_UNEXPECTED_RESPONSE,
                           f"unexpected answer to {method} {path} (status {self.status}): {exc}",
                           request_id=self.header("X-Request-ID")) from None


class Client:
    """A client of one powercontext API (any replica behind ``base_url``).

    >>> pc = Client("http://127.0.0.1:8080", token="…")
    >>> pc.capture_source("agent-42", "用户喜欢简洁的回答。")
    >>> pc.flush_memory("agent-42")      # submit, then poll the operation until done
    >>> pc.get_memory("agent-42").entries
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        *,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        operation_deadline: float = DEFAULT_OPERATION_DEADLINE,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        ca_file: Optional[str] = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._ssl_context = ssl_context(ca_file)  # a PEM CA bundle to trust for https:// (default: the system's)
        self._token = token
        self.timeout = timeout
        self.operation_deadline = operation_deadline
        self.poll_interval = poll_interval if poll_interval > 0 else DEFAULT_POLL_INTERVAL
        parts = urllib.parse.urlsplit(self.base_url)
        netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
        self._display = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    def __repr__(self) -> str:
        return f"Client({self._display!r})"

    # --- transport -------------------------------------------------------------------------------------------

    def _round_trip(
        self,
        method: str,
        path: str,
        query: Optional[Dict[str, Any]] = None,
        body: Any = None,
        headers: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> _Response:
        """Sends one request and returns its answer whatever the status; only transport failures raise."""
        url = path
        if query:
            q = {k: str(v) for k, v in query.items() if v is not None and v != ""}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        data = None
        h: Dict[str, str] = {}
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        return self._open(self._request(method, url, data, h), self.timeout if timeout is None else timeout)

    def _request(self, method: str, path: str, data: Union[None, bytes, IO[bytes]],
                 headers: Dict[str, str]) -> urllib.request.Request:
        h = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if self._token:
            h["Authorization"] = "Bearer " + self._token
        h.update(headers)
        return urllib.request.Request(self.base_url + path, data=data, headers=h, method=method)

    def _open(self, req: urllib.request.Request, timeout: Optional[float]) -> _Response:
        try:
            ctx = self._ssl_context
            with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:  # noqa: S310 - the caller chose the URL
                return _Response(resp.status, resp.headers, resp.read(_MAX_RESPONSE_BYTES))
        except urllib.error.HTTPError as err:
            with err:
                return _Response(err.code, err.headers, err.read(_MAX_RESPONSE_BYTES))
        except OSError as err:
            raise self._transport_error(err) from None

    def _transport_error(self, err: OSError) -> ConnectionFailedError:
        if isinstance(err, (socket.timeout, TimeoutError)):
            return ConnectionFailedError(self._display, str(err) or "timed out", timeout=True)
        if isinstance(err, urllib.error.URLError):
            timed_out = isinstance(err.reason, (socket.timeout, TimeoutError))
            return ConnectionFailedError(self._display, str(err.reason), timeout=timed_out)
        return ConnectionFailedError(self._display, str(err))

    @staticmethod
    def _check(resp: _Response) -> _Response:
        if resp.status >= 400:
            raise _api_error(resp)
        return resp

    def _send(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, body: Any = None,
              headers: Optional[Dict[str, str]] = None, timeout: Optional[float] = None) -> _Response:
        resp = self._round_trip(method, path, query, body, headers, timeout)
        if resp.status >= 400:
            raise _api_error(resp)
        return resp

    def _call(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, body: Any = None) -> Any:
        return self._send(method, path, query, body).json(method, path)

    # --- Sources ---------------------------------------------------------------------------------------------

    def capture_source(
        self,
        scope_id: str,
        content: str,
        *,
        source_id: Optional[str] = None,
        source_type: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> CaptureResult:
        """Appends a Source to the scope's journal (POST /v1/sources). Pass ``source_id`` to make retries
        idempotent: a repeated (scope_id, source_id) returns the first capture with ``created`` False."""
        body: Dict[str, Any] = {"scope_id": scope_id, "content": content}
        if source_id:
            body["source_id"] = source_id
        if source_type:
            body["source_type"] = source_type
        if metadata is not None:
            body["metadata"] = dict(metadata)
        return CaptureResult.from_json(self._call("POST", "/v1/sources", body=body))

    def list_sources(self, scope_id: str, *, after: int = 0, limit: Optional[int] = None) -> SourceList:
        """A page of the scope's journal in journal order (GET /v1/sources)."""
        q = {"scope_id": scope_id, "after": after or None, "limit": limit}
        return SourceList.from_json(self._call("GET", "/v1/sources", q))

    def forget_source(self, scope_id: str, source_id: str) -> ForgetResult:
        """Forgets one Source (DELETE /v1/sources/{id}?scope_id=): its content is erased at once and, when Memory
        consumed it, a memory_redact operation removes it from every revision (follow it with wait_operation)."""
        path = "/v1/sources/" + urllib.parse.quote(source_id, safe="")
        return ForgetResult.from_json(self._call("DELETE", path, {"scope_id": scope_id}))

    def erase_scope(self, scope_id: str) -> EraseResult:
        """Erases a whole scope (DELETE /v1/scopes/{id}): returns its scope_erase operation (a live one is joined);
        follow it with wait_operation."""
        return EraseResult.from_json(self._call("DELETE", "/v1/scopes/" + urllib.parse.quote(scope_id, safe="")))

    # --- Memory ----------------------------------------------------------------------------------------------

    def flush_memory(self, scope_id: str, *, on_progress: Optional[Progress] = None) -> FlushResult:
        """Flushes the scope's new Sources into Memory and waits for the result.

        Submits with ``Prefer: respond-async``, then polls GET /v1/operations/{id} (any replica may answer) until
        the operation is done or the operation deadline passes. Returns the FlushResult; raises
        OperationFailedError when it failed, was cancelled or is blocked by a failed operation, and
        OperationPendingError at the deadline (the operation keeps running). ``on_progress`` sees the record
        after the 202 answer and after every poll that is not final.
        """
        answer = self._trigger("/v1/memory/flush", "memory_flush", scope_id, on_progress)
        if not isinstance(answer, OperationRecord):
            return FlushResult.from_json(answer)
        r = answer.result
        if not isinstance(r, MemoryFlushOperationResult):
            r = MemoryFlushOperationResult(0, 0, 0, 0, None)
        return FlushResult("processed", r.previous_cursor, r.current_cursor, r.high_watermark,
                           r.processed_source_count, r.memory, answer.operation_id)

    def _trigger(self, path: str, kind: str, scope_id: str,
                 on_progress: Optional[Progress]) -> Union[Dict[str, Any], OperationRecord]:
        """The flush and incubation protocol: POST with ``Prefer: respond-async``; a 200 answer's body is returned
        as is; a 202 answer is followed until the operation is terminal and its succeeded record is returned."""
        deadline = time.monotonic() + self.operation_deadline
        try:
            resp = self._send("POST", path, body={"scope_id": scope_id}, headers={"Prefer": "respond-async"})
        except APIError as err:
            if err.status == 409:
                failed = self._flush_conflict(err)
                if failed is not None:
                    raise failed from None
            raise
        if resp.status == 200:
            answered: Dict[str, Any] = resp.json("POST", path)
            return answered
        if resp.status != 202:
            raise APIError(resp.status, CODE_UNEXPECTED_RESPONSE, f"unexpected answer to POST {path}",
                           request_id=resp.header("X-Request-ID"))
        accepted = resp.json("POST", path)
        first = OperationRecord(operation_id=accepted["operation_id"], kind=kind, scope_id=scope_id,
                                status=accepted["status"])
        if on_progress is not None:
            on_progress(first)
        return self._wait(first, deadline, on_progress)

    def submit_flush(self, scope_id: str, *, wait: Optional[float] = None) -> Tuple[int, Dict[str, Any]]:
        """The bare POST /v1/memory/flush: returns (status, body) for 200 and 202; ``wait`` is the Prefer wait in
        seconds (0 = respond-async; None = the server's default). Errors raise APIError."""
        headers = {}
        if wait is not None:
            headers["Prefer"] = "respond-async" if wait <= 0 else f"wait={wait:g}"
        resp = self._send("POST", "/v1/memory/flush", body={"scope_id": scope_id}, headers=headers)
        return resp.status, resp.json("POST", "/v1/memory/flush")

    def get_memory(self, scope_id: str, *, revision: Optional[int] = None) -> Memory:
        """The scope's current Memory revision and its entries (GET /v1/memory), or revision ``revision``; a
        revision never committed (or purged) is APIError 404 ``revision_not_found``."""
        return Memory.from_json(self._call("GET", "/v1/memory", {"scope_id": scope_id, "revision": revision}))

    def list_memory_revisions(self, scope_id: str, *, cursor: Optional[str] = None,
                              limit: Optional[int] = None) -> MemoryRevisionList:
        """A page of the scope's Memory revisions, newest first (GET /v1/memory/revisions)."""
        return MemoryRevisionList.from_json(self._call("GET", "/v1/memory/revisions",
                                                       {"scope_id": scope_id, "cursor": cursor, "limit": limit}))

    def diff_memory(self, scope_id: str, *, from_: Optional[int] = None, to: Optional[int] = None) -> MemoryDiff:
        """What changed between two revisions (GET /v1/memory/diff): ``to`` defaults to the current revision,
        ``from_`` to the one before it (0 is the empty Memory). The names are the wire's ``from`` and ``to``
        (``from`` is a Python keyword, hence ``from_``)."""
        return MemoryDiff.from_json(self._call("GET", "/v1/memory/diff",
                                               {"scope_id": scope_id, "from": from_, "to": to}))

    def get_context(self, scope_id: str, *, q: Optional[str] = None, max_tokens: Optional[int] = None,
                    mode: Optional[str] = None) -> Context:
        """The scope's Memory entries and approved lessons most relevant to ``q``, within ``max_tokens``
        (GET /v1/context): the call an agent makes before a step. ``mode`` ranks the entries as in
        ``search_memory``."""
        return Context.from_json(self._call("GET", "/v1/context",
                                            {"scope_id": scope_id, "q": q, "max_tokens": max_tokens, "mode": mode}))

    def search_memory(self, scope_id: str, q: str, *, limit: Optional[int] = None,
                      mode: Optional[str] = None) -> Memory:
        """The entries of the scope's current Memory that match ``q``, best first (GET /v1/memory/search).
        ``mode`` is ``"fts"`` (full text), ``"semantic"`` (embeddings) or ``"hybrid"`` (both, fused); by default
        hybrid when the revision has embeddings, else fts. The answer's ``mode`` names the ranking that ran and
        ``degraded`` says a vector mode fell back to full text."""
        return Memory.from_json(self._call("GET", "/v1/memory/search", {"scope_id": scope_id, "q": q,
                                                                         "limit": limit, "mode": mode}))

    # --- Operations ------------------------------------------------------------------------------------------

    def get_operation(self, operation_id: str, *, timeout: Optional[float] = None) -> OperationRecord:
        """One Operation (GET /v1/operations/{id}); an unknown id is APIError 404 ``operation_not_found``."""
        path = _operation_path(operation_id)
        return OperationRecord.from_json(self._send("GET", path, timeout=timeout).json("GET", path))

    def list_operations(self, *, scope_id: Optional[str] = None, kind: Optional[str] = None,
                        status: Optional[str] = None, cursor: Optional[str] = None,
                        limit: Optional[int] = None) -> OperationList:
        """A page of Operations, newest first (GET /v1/operations)."""
        q = {"scope_id": scope_id, "kind": kind, "status": status, "cursor": cursor, "limit": limit}
        return OperationList.from_json(self._call("GET", "/v1/operations", q))

    def cancel_operation(self, operation_id: str, expected_version: int) -> OperationRecord:
        """Cancels at ``expected_version`` (→ cancelled, or cancelling while running); a stale version or an
        illegal transition is APIError 409 ``operation_conflict`` with ``details["actual_version"]``."""
        return OperationRecord.from_json(self._call("POST", _operation_path(operation_id) + "/cancel",
                                                    body={"expected_version": expected_version}))

    def retry_operation(self, operation_id: str, expected_version: int) -> OperationRecord:
        """Queues a failed or cancelled operation again at ``expected_version``."""
        return OperationRecord.from_json(self._call("POST", _operation_path(operation_id) + "/retry",
                                                    body={"expected_version": expected_version}))

    def skip_operation(self, operation_id: str, expected_version: int) -> OperationRecord:
        """Skips a failed memory_flush or experience_incubation window at ``expected_version`` (admins): its Sources
        are moved past without being processed, the operation succeeds with result code ``skipped`` and the scope's
        lane moves on."""
        return OperationRecord.from_json(self._call("POST", _operation_path(operation_id) + "/skip",
                                                    body={"expected_version": expected_version}))

    def wait_operation(self, operation_id: str, *, on_progress: Optional[Progress] = None) -> OperationRecord:
        """Polls an operation until it is done or the operation deadline (from now) passes; see flush_memory."""
        deadline = time.monotonic() + self.operation_deadline
        rec = self.get_operation(operation_id)
        if rec.terminal:
            _raise_if_failed(rec)
            return rec
        if on_progress is not None:
            on_progress(rec)
        return self._wait(rec, deadline, on_progress)

    def _wait(self, last: OperationRecord, deadline: float, on_progress: Optional[Progress]) -> OperationRecord:
        """Polls until terminal or the deadline; transient failures (no answer, 429, 5xx) are retried."""
        status, pause = last.status, self.poll_interval
        last_error: Optional[Exception] = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise OperationPendingError(last.operation_id, status, self.operation_deadline, last_error)
            time.sleep(min(pause, remaining))
            pause = self.poll_interval
            budget = max(deadline - time.monotonic(), _MIN_POLL_BUDGET)
            if self.timeout is not None:
                budget = min(budget, self.timeout)
            try:
                rec = self.get_operation(last.operation_id, timeout=budget)
            except ConnectionFailedError as err:
                last_error = err
                continue
            except APIError as err:
                if not err.temporary:
                    raise
                last_error = err
                if err.retry_after and err.retry_after > pause:
                    pause = err.retry_after
                continue
            last_error = None
            if rec.terminal:
                _raise_if_failed(rec)
                return rec
            status = rec.status
            if on_progress is not None:
                on_progress(rec)

    def _flush_conflict(self, err: APIError) -> Optional[OperationFailedError]:
        op_id = err.details.get("operation_id") or ""
        if err.code == "operation_cancelled":
            return OperationFailedError(op_id, "cancelled", "cancelled")
        if err.code in ("operation_blocked", "operation_failed"):
            failed = OperationFailedError(op_id, err.code, "failed", blocked=err.code == "operation_blocked")
            if op_id:  # best effort: name the failed operation's own error
                try:
                    rec = self.get_operation(op_id)
                except (APIError, ConnectionFailedError):
                    rec = None
                if rec is not None and rec.error is not None and rec.error.code:
                    failed.code, failed.category = rec.error.code, rec.error.category
            return failed
        return None

    # --- Experience ------------------------------------------------------------------------------------------

    def incubate_experience(self, scope_id: str, *, on_progress: Optional[Progress] = None) -> IncubateResult:
        """Proposes Experience candidates from the scope's Sources captured since the last incubation, now instead of
        at the next schedule (POST /v1/experience/incubate), and waits for the result like ``flush_memory``: the
        same ``Prefer: respond-async`` submit, polling, deadline and OperationPendingError/OperationFailedError.

        Only Sources whose metadata says ``"kind": "task-outcome"`` propose lessons; ``candidate_count`` is how many
        ``pending`` candidates the window proposed (review them with list_experience_candidates, approve_candidate,
        reject_candidate). ``status`` is ``idle`` (nothing new, ``operation_id`` None) or ``processed``.
        """
        answer = self._trigger("/v1/experience/incubate", "experience_incubation", scope_id, on_progress)
        if not isinstance(answer, OperationRecord):
            return IncubateResult.from_json(answer)
        r = answer.result
        if not isinstance(r, ExperienceIncubationOperationResult):
            r = ExperienceIncubationOperationResult(0, 0, 0, 0, 0)
        return IncubateResult("processed", r.previous_cursor, r.current_cursor, r.high_watermark,
                              r.processed_source_count, r.candidate_count, answer.operation_id)

    def list_experience_candidates(self, scope_id: str, *, status: Optional[str] = None,
                                   limit: Optional[int] = None) -> List[Candidate]:
        """The scope's Experience candidates, newest first (GET /v1/experience/candidates)."""
        d = self._call("GET", "/v1/experience/candidates", {"scope_id": scope_id, "status": status, "limit": limit})
        return [Candidate.from_json(x) for x in d["items"]]

    def approve_candidate(self, candidate_id: str, expected_version: int) -> Candidate:
        """Approves a pending candidate (409 ``candidate_conflict`` when the version is stale)."""
        return self._review(candidate_id, "approve", expected_version)

    def reject_candidate(self, candidate_id: str, expected_version: int) -> Candidate:
        """Rejects a pending candidate (409 ``candidate_conflict`` when the version is stale)."""
        return self._review(candidate_id, "reject", expected_version)

    def _review(self, candidate_id: str, verb: str, expected_version: int) -> Candidate:
        path = "/v1/experience/candidates/" + urllib.parse.quote(candidate_id, safe="") + "/" + verb
        return Candidate.from_json(self._call("POST", path, body={"expected_version": expected_version}))

    # --- Portability -----------------------------------------------------------------------------------------

    def export_scope(self, scope_id: str, out: IO[bytes], *, embeddings: bool = False) -> int:
        """Writes the export stream of the scope (GET /v1/scopes/{id}/export, application/x-ndjson) to ``out``,
        with the entries' vectors when ``embeddings`` is set, and returns the bytes written. Raises
        ExportIncompleteError when the stream ends without its trailer line (the scope changed while the server
        read it, or the connection broke): what was written is not importable; export again."""
        path = "/v1/scopes/" + urllib.parse.quote(scope_id, safe="") + "/export"
        if embeddings:
            path += "?embeddings=true"
        req = self._request("GET", path, None, {"Accept": "application/x-ndjson, application/json"})
        written = 0
        tail = b""  # the last bytes seen: enough to hold the last line when it is a trailer
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl_context) as resp:  # noqa: S310
                while True:
                    chunk = resp.read(64 << 10)
                    if not chunk:
                        break
                    out.write(chunk)
                    written += len(chunk)
                    tail = (tail + chunk)[-(_MAX_TRAILER_BYTES + 2):]
        except urllib.error.HTTPError as err:
            with err:
                raise _api_error(_Response(err.code, err.headers, err.read(_MAX_RESPONSE_BYTES))) from None
        except http.client.HTTPException as err:  # e.g. IncompleteRead: the connection broke mid-stream
            raise ExportIncompleteError(written) from err
        except OSError as err:
            raise self._transport_error(err) from None
        if not _ends_with_trailer(tail):
            raise ExportIncompleteError(written)
        return written

    def import_scope(self, scope_id: str, stream: Union[bytes, IO[bytes]]) -> ImportScopeResult:
        """Imports an export stream (bytes or a binary file) into the empty scope (POST /v1/scopes/{id}/import).
        A refused import changes nothing and raises APIError: 422 ``import_truncated`` (no trailer),
        ``import_checksum_mismatch``, ``import_format_unsupported``, ``import_invalid_record``; 409
        ``scope_not_empty``, ``import_id_collision``, ``scope_erasing`` (``details["line"]`` names the line)."""
        path = "/v1/scopes/" + urllib.parse.quote(scope_id, safe="") + "/import"
        req = self._request("POST", path, stream, {"Content-Type": "application/x-ndjson"})
        return ImportScopeResult.from_json(self._check(self._open(req, self.timeout)).json("POST", path))

    # --- Skills ----------------------------------------------------------------------------------------------

    def list_skills(self, scope_id: str) -> List[Skill]:
        """The scope's skills (GET /v1/skills)."""
        return [Skill.from_json(x) for x in self._call("GET", "/v1/skills", {"scope_id": scope_id})["items"]]

    def list_skill_revisions(self, scope_id: str, name: str) -> List[SkillRevision]:
        """A skill's revisions, newest first (GET /v1/skills/{name}/revisions)."""
        path = "/v1/skills/" + urllib.parse.quote(name, safe="") + "/revisions"
        return [SkillRevision.from_json(x) for x in self._call("GET", path, {"scope_id": scope_id})["items"]]

    def register_skill_target(self, scope_id: str, agent_kind: str, display_name: str) -> RegisteredSkillTarget:
        """Registers an agent installation (POST /v1/skill-targets, admin): the answer carries its one-time
        ``enrollment_token``; no later call shows it again."""
        body = {"scope_id": scope_id, "agent_kind": agent_kind, "display_name": display_name}
        return RegisteredSkillTarget.from_json(self._call("POST", "/v1/skill-targets", body=body))

    def list_skill_targets(self, scope_id: str) -> List[SkillTarget]:
        """The scope's targets (GET /v1/skill-targets, admin); never a token."""
        d = self._call("GET", "/v1/skill-targets", {"scope_id": scope_id})
        return [SkillTarget.from_json(x) for x in d["items"]]

    def revoke_skill_target(self, target_id: str) -> SkillTarget:
        """Revokes a target (POST /v1/skill-targets/{id}/revoke, admin)."""
        path = "/v1/skill-targets/" + urllib.parse.quote(target_id, safe="") + "/revoke"
        return SkillTarget.from_json(self._call("POST", path))

    def publish_skill(self, target_id: str, name: str, *, revision: int = 0,
                      unpublish: bool = False) -> SkillPublication:
        """Sets the desired state of a skill on a target (PUT /v1/skill-targets/{id}/publications/{name}, admin):
        published at ``revision`` (0: follow the current revision), or unpublished."""
        body: Dict[str, Any] = {"desired_state": "unpublished" if unpublish else "published"}
        if revision > 0:
            body["revision"] = revision
        path = ("/v1/skill-targets/" + urllib.parse.quote(target_id, safe="") + "/publications/"
                + urllib.parse.quote(name, safe=""))
        return SkillPublication.from_json(self._call("PUT", path, body=body))

    def list_skill_publications(self, target_id: str) -> List[SkillPublication]:
        """A target's publications and their states (GET /v1/skill-targets/{id}/publications, admin)."""
        path = "/v1/skill-targets/" + urllib.parse.quote(target_id, safe="") + "/publications"
        return [SkillPublication.from_json(x) for x in self._call("GET", path)["items"]]

    # --- Runtime ---------------------------------------------------------------------------------------------

    def members(self) -> List[Member]:
        """The live runtime members (GET /v1/runtime/members)."""
        return [Member.from_json(x) for x in self._call("GET", "/v1/runtime/members")["items"]]

    def ready(self) -> Health:
        """Readiness of the replica that answered (GET /health/ready); a 503 answer is returned, not raised:
        check ``Health.serving``."""
        resp = self._round_trip("GET", "/health/ready")
        if resp.status not in (200, 503):
            raise _api_error(resp)
        d = resp.json("GET", "/health/ready")
        return Health(d.get("status", ""), dict(d.get("checks") or {}))


def _operation_path(operation_id: str) -> str:
    return "/v1/operations/" + urllib.parse.quote(operation_id, safe="")


def _raise_if_failed(rec: OperationRecord) -> None:
    if rec.status == "failed":
        code = rec.error.code if rec.error is not None and rec.error.code else "failed"
        category = rec.error.category if rec.error is not None else ""
        raise OperationFailedError(rec.operation_id, code, "failed", category=category)
    if rec.status == "cancelled":
        raise OperationFailedError(rec.operation_id, "cancelled", "cancelled")


def _ends_with_trailer(tail: bytes) -> bool:
    """Whether ``tail`` (the stream's last bytes) ends with a newline-terminated ``{"type":"trailer"}`` line."""
    if not tail.endswith(b"\n"):
        return False
    body = tail[:-1]
    start = body.rfind(b"\n")
    if start < 0 and len(body) > _MAX_TRAILER_BYTES:
        return False
    line = body[start + 1:]
    if len(line) > _MAX_TRAILER_BYTES:
        return False
    try:
        d = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(d, dict) and d.get("type") == "trailer"


def _api_error(resp: _Response) -> APIError:
    request_id = resp.header("X-Request-ID")
    retry_after: Optional[float] = None
    raw = resp.header("Retry-After")
    if raw:
        try:
            retry_after = float(int(raw.strip()))
        except ValueError:
            retry_after = None
    try:
        env = json.loads(resp.body.decode("utf-8"))
        e = env.get("error") if isinstance(env, dict) else None
        if isinstance(e, dict) and e.get("code"):
            details = e.get("details") if isinstance(e.get("details"), dict) else {}
            return APIError(resp.status, e["code"], e.get("message", ""), details, request_id, retry_after)
    except (UnicodeDecodeError, ValueError):
        pass
    return APIError(resp.status, CODE_UNEXPECTED_RESPONSE, f"HTTP {resp.status}", None, request_id, retry_after)
