import {
  APIError,
  CODE_UNEXPECTED_RESPONSE,
  ConnectionError,
  ExportIncompleteError,
  OperationFailedError,
  OperationPendingError,
} from "./errors.js";
import { caFileFetch } from "./tls.js";
import {
  TERMINAL_STATUSES,
  type Candidate,
  type CaptureResult,
  type CaptureSourceRequest,
  type Context,
  type EraseResult,
  type ErrorBody,
  type FlushAccepted,
  type FlushResult,
  type ForgetResult,
  type Health,
  type ImportScopeResult,
  type IncubateResult,
  type ListOperationsParams,
  type Member,
  type Memory,
  type MemoryDiff,
  type MemoryRevisionList,
  type OperationList,
  type OperationRecord,
  type RegisteredSkillTarget,
  type SearchMode,
  type Skill,
  type SkillPublication,
  type SkillRevision,
  type SkillTarget,
  type SourceList,
} from "./types.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_OPERATION_DEADLINE_MS = 30_000;
export const DEFAULT_POLL_INTERVAL_MS = 200;
const MIN_POLL_BUDGET_MS = 1_000;
const MAX_TRAILER_BYTES = 1024; // a longer last line is not a trailer (the Go client's bound)

/** Where exportScope writes the stream: a returned promise is awaited (a FileHandle, a writer, a callback's). */
export interface ExportSink {
  write(chunk: Uint8Array): unknown;
}

export interface ExportScopeOptions {
  /** Include the entries' vectors. */
  embeddings?: boolean;
  /** Bounds the whole stream (the client's timeoutMs does not: an export may take longer). */
  signal?: AbortSignal;
}

/** An export stream to import: its bytes, text, a Blob or a ReadableStream of bytes. */
export type ImportStream = Uint8Array | string | Blob | ReadableStream<Uint8Array>;

export interface ImportScopeOptions {
  /** Bounds the request (the client's timeoutMs does not: an import may take longer). */
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** Sent as "Authorization: Bearer <token>". */
  token?: string;
  /** Bound of each HTTP request in milliseconds (default 30 s; 0 = none). */
  timeoutMs?: number;
  /** How long flushMemory, incubateExperience and waitOperation wait for an operation (default 30 s). */
  operationDeadlineMs?: number;
  /** Pause between two polls of an operation (default 200 ms). */
  pollIntervalMs?: number;
  /** The fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Node.js: a PEM CA bundle to trust for an https:// server instead of the system's (see tls.ts; not with fetch). */
  caFile?: string;
}

/**
 * Sees an operation's full record while flushMemory, incubateExperience or waitOperation follows it: a handler typed
 * `(op: OperationRecord) => void` fits.
 */
export type Progress = (record: OperationRecord) => void;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

type Query = { [name: string]: string | number | undefined };

/**
 * A client of one powercontext API (any replica behind baseURL). Uses fetch only.
 *
 *     const pc = new Client("http://127.0.0.1:8080", { token });
 *     await pc.captureSource({ scope_id: "agent-42", content: "用户喜欢简洁的回答。" });
 *     await pc.flushMemory("agent-42"); // submit, then poll the operation until done
 *     const memory = await pc.getMemory("agent-42");
 */
export class Client {
  readonly baseURL: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #deadlineMs: number;
  readonly #pollMs: number;
  readonly #fetch: typeof fetch;
  readonly #display: string;

  constructor(baseURL: string, options: ClientOptions = {}) {
    this.baseURL = baseURL.replace(/\/+$/, "");
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#deadlineMs = options.operationDeadlineMs ?? DEFAULT_OPERATION_DEADLINE_MS;
    this.#pollMs = options.pollIntervalMs && options.pollIntervalMs > 0 ? options.pollIntervalMs : DEFAULT_POLL_INTERVAL_MS;
    this.#fetch = options.fetch ??
      (options.caFile ? caFileFetch(options.caFile) : globalThis.fetch.bind(globalThis));
    let display = this.baseURL;
    try {
      const u = new URL(this.baseURL);
      u.username = "";
      u.password = "";
      display = u.toString().replace(/\/+$/, "");
    } catch {
      // keep the text as given; fetch reports the bad URL
    }
    this.#display = display;
  }

  // --- transport ------------------------------------------------------------------------------------------------

  /** Sends one request and returns its answer whatever the status; only transport failures throw. */
  async #roundTrip(method: string, path: string, query?: Query, body?: unknown, headers?: Record<string, string>,
    timeoutMs?: number): Promise<Answer> {
    let url = this.baseURL + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v !== undefined && v !== "") q.set(k, String(v));
      }
      const s = q.toString();
      if (s) url += "?" + s;
    }
    const h: Record<string, string> = { Accept: "application/json" };
    if (body !== undefined) h["Content-Type"] = "application/json";
    if (this.#token) h["Authorization"] = "Bearer " + this.#token;
    Object.assign(h, headers);
    const limit = timeoutMs ?? this.#timeoutMs;
    const init: RequestInit = { method, headers: h };
    if (body !== undefined) init.body = JSON.stringify(body);
    if (limit > 0) init.signal = AbortSignal.timeout(limit);
    let resp: Response;
    let text: string;
    try {
      resp = await this.#fetch(url, init);
      text = await resp.text();
    } catch (err) {
      const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
      const reason = err instanceof Error ? (cause || err.message) : String(err);
      throw new ConnectionError(this.#display, reason, timeout, err);
    }
    return { status: resp.status, headers: resp.headers, text };
  }

  async #send(method: string, path: string, query?: Query, body?: unknown, headers?: Record<string, string>,
    timeoutMs?: number): Promise<Answer> {
    const a = await this.#roundTrip(method, path, query, body, headers, timeoutMs);
    if (a.status >= 400) throw apiError(a);
    return a;
  }

  async #call<T>(method: string, path: string, query?: Query, body?: unknown): Promise<T> {
    return decode<T>(await this.#send(method, path, query, body), method, path);
  }

  // --- Sources --------------------------------------------------------------------------------------------------

  /**
   * Appends a Source to its scope's journal (POST /v1/sources). Pass source_id to make retries idempotent: a
   * repeated (scope_id, source_id) returns the first capture with created false.
   */
  captureSource(req: CaptureSourceRequest): Promise<CaptureResult> {
    return this.#call("POST", "/v1/sources", undefined, req);
  }

  /** A page of a scope's journal in journal order (GET /v1/sources). */
  listSources(scopeId: string, params: { after?: number; limit?: number } = {}): Promise<SourceList> {
    return this.#call("GET", "/v1/sources", { scope_id: scopeId, after: params.after || undefined, limit: params.limit });
  }

  /**
   * Forgets one Source (DELETE /v1/sources/{id}?scope_id=): its content is erased at once and, when Memory consumed
   * it, a memory_redact operation removes it from every revision (follow it with waitOperation).
   */
  forgetSource(scopeId: string, sourceId: string): Promise<ForgetResult> {
    return this.#call("DELETE", "/v1/sources/" + encodeURIComponent(sourceId), { scope_id: scopeId });
  }

  /** Erases a whole scope (DELETE /v1/scopes/{id}); returns its scope_erase operation (a live one is joined). */
  eraseScope(scopeId: string): Promise<EraseResult> {
    return this.#call("DELETE", "/v1/scopes/" + encodeURIComponent(scopeId));
  }

  // --- Memory ---------------------------------------------------------------------------------------------------

  /**
   * Flushes a scope's new Sources into Memory and waits for the result. Submits with "Prefer: respond-async", then
   * polls GET /v1/operations/{id} (any replica may answer) until the operation is done or the operation deadline
   * passes. Resolves to the FlushResult; rejects with OperationFailedError when it failed, was cancelled or is
   * blocked by a failed operation, and OperationPendingError at the deadline (the operation keeps running).
   * onProgress gets the full OperationRecord: once right after the 202 answer (the client reads the operation at
   * once, whatever its status), then after every poll that is not final.
   */
  async flushMemory(scopeId: string, options: { onProgress?: Progress } = {}): Promise<FlushResult> {
    const answer = await this.#trigger<FlushResult>("/v1/memory/flush", scopeId, options.onProgress);
    if (answer.kind === "answered") return answer.body;
    const rec = answer.record;
    const r = rec.result && rec.result.type === "memory_flush" ? rec.result : null;
    return {
      status: "processed",
      previous_cursor: r?.previous_cursor ?? 0,
      current_cursor: r?.current_cursor ?? 0,
      high_watermark: r?.high_watermark ?? 0,
      processed_source_count: r?.processed_source_count ?? 0,
      memory: r?.memory ?? null,
      operation_id: rec.operation_id,
    };
  }

  /**
   * The flush and incubation protocol: POST with "Prefer: respond-async"; a 200 answer's body is returned as is; a
   * 202 answer is followed until the operation is terminal and its succeeded record is returned.
   */
  async #trigger<T>(path: string, scopeId: string, onProgress: Progress | undefined):
    Promise<{ kind: "answered"; body: T } | { kind: "operation"; record: OperationRecord }> {
    const deadline = Date.now() + this.#deadlineMs;
    let a: Answer;
    try {
      a = await this.#send("POST", path, undefined, { scope_id: scopeId }, { Prefer: "respond-async" });
    } catch (err) {
      if (err instanceof APIError && err.status === 409) {
        const failed = await this.#flushConflict(err);
        if (failed) throw failed;
      }
      throw err;
    }
    if (a.status === 200) return { kind: "answered", body: decode<T>(a, "POST", path) };
    if (a.status !== 202) {
      throw new APIError(a.status, CODE_UNEXPECTED_RESPONSE, `unexpected answer to POST ${path}`, null,
        a.headers.get("X-Request-ID") ?? "");
    }
    const acc = decode<FlushAccepted>(a, "POST", path);
    return { kind: "operation", record: await this.#wait(acc.operation_id, acc.status, deadline, onProgress, true) };
  }

  /**
   * The bare POST /v1/memory/flush: resolves to the 200 FlushResult or the 202 FlushAccepted. waitSeconds is the
   * Prefer wait (0 = respond-async; undefined = the server's default).
   */
  async submitFlush(scopeId: string, waitSeconds?: number):
    Promise<{ status: 200; body: FlushResult } | { status: 202; body: FlushAccepted; location: string }> {
    const headers: Record<string, string> = {};
    if (waitSeconds !== undefined) headers["Prefer"] = waitSeconds <= 0 ? "respond-async" : `wait=${waitSeconds}`;
    const path = "/v1/memory/flush";
    const a = await this.#send("POST", path, undefined, { scope_id: scopeId }, headers);
    if (a.status === 202) {
      return { status: 202, body: decode<FlushAccepted>(a, "POST", path), location: a.headers.get("Location") ?? "" };
    }
    return { status: 200, body: decode<FlushResult>(a, "POST", path) };
  }

  /**
   * A scope's current Memory revision and its entries (GET /v1/memory), or revision `params.revision`; a revision
   * never committed (or purged) is APIError 404 revision_not_found.
   */
  getMemory(scopeId: string, params: { revision?: number } = {}): Promise<Memory> {
    return this.#call("GET", "/v1/memory", { scope_id: scopeId, revision: params.revision });
  }

  /** A page of a scope's Memory revisions, newest first (GET /v1/memory/revisions). */
  listMemoryRevisions(scopeId: string, params: { cursor?: string; limit?: number } = {}): Promise<MemoryRevisionList> {
    return this.#call("GET", "/v1/memory/revisions", { scope_id: scopeId, cursor: params.cursor, limit: params.limit });
  }

  /**
   * What changed between two revisions (GET /v1/memory/diff): `to` defaults to the current revision, `from` to the
   * one before it (0 is the empty Memory).
   */
  diffMemory(scopeId: string, params: { from?: number; to?: number } = {}): Promise<MemoryDiff> {
    return this.#call("GET", "/v1/memory/diff", { scope_id: scopeId, from: params.from, to: params.to });
  }

  /**
   * The scope's Memory entries and approved lessons most relevant to `q`, within `max_tokens` (GET /v1/context):
   * the call an agent makes before a step.
   */
  getContext(scopeId: string, params: { q?: string; max_tokens?: number; mode?: SearchMode } = {}): Promise<Context> {
    return this.#call("GET", "/v1/context", {
      scope_id: scopeId,
      q: params.q,
      max_tokens: params.max_tokens,
      mode: params.mode,
    });
  }

  /**
   * The entries of a scope's current Memory that match q, best first (GET /v1/memory/search). mode is "fts" (full
   * text), "semantic" (embeddings) or "hybrid" (both, fused); by default hybrid when the revision has embeddings, else
   * fts. The answer's mode names the ranking that ran and degraded says a vector mode fell back to full text.
   */
  searchMemory(scopeId: string, q: string, params: { limit?: number; mode?: SearchMode } = {}): Promise<Memory> {
    return this.#call("GET", "/v1/memory/search", { scope_id: scopeId, q, limit: params.limit, mode: params.mode });
  }

  // --- Operations -----------------------------------------------------------------------------------------------

  /** One Operation (GET /v1/operations/{id}); an unknown id is APIError 404 operation_not_found. */
  async getOperation(operationId: string, timeoutMs?: number): Promise<OperationRecord> {
    const path = operationPath(operationId);
    return decode<OperationRecord>(await this.#send("GET", path, undefined, undefined, undefined, timeoutMs), "GET", path);
  }

  /** A page of Operations, newest first (GET /v1/operations). */
  listOperations(params: ListOperationsParams = {}): Promise<OperationList> {
    return this.#call("GET", "/v1/operations", { ...params });
  }

  /**
   * Cancels at expectedVersion (→ cancelled, or cancelling while running); a stale version or an illegal
   * transition is APIError 409 operation_conflict with details.actual_version.
   */
  cancelOperation(operationId: string, expectedVersion: number): Promise<OperationRecord> {
    return this.#call("POST", operationPath(operationId) + "/cancel", undefined, { expected_version: expectedVersion });
  }

  /** Queues a failed or cancelled operation again at expectedVersion. */
  retryOperation(operationId: string, expectedVersion: number): Promise<OperationRecord> {
    return this.#call("POST", operationPath(operationId) + "/retry", undefined, { expected_version: expectedVersion });
  }

  /**
   * Skips a failed memory_flush or experience_incubation window at expectedVersion (admins): its Sources are moved
   * past without being processed, the operation succeeds with result code skipped and the scope's lane moves on.
   */
  skipOperation(operationId: string, expectedVersion: number): Promise<OperationRecord> {
    return this.#call("POST", operationPath(operationId) + "/skip", undefined, { expected_version: expectedVersion });
  }

  /** Polls an operation until it is done or the operation deadline (from now) passes; see flushMemory. */
  async waitOperation(operationId: string, options: { onProgress?: Progress } = {}): Promise<OperationRecord> {
    const deadline = Date.now() + this.#deadlineMs;
    const rec = await this.getOperation(operationId);
    if (TERMINAL_STATUSES.has(rec.status)) return finished(rec);
    options.onProgress?.(rec);
    return this.#wait(operationId, rec.status, deadline, options.onProgress);
  }

  /**
   * Polls until terminal or the deadline; transient failures (no answer, 429, 5xx) are retried. With announce, the
   * first poll is immediate and its record goes to onProgress even when it is final (the record after the 202).
   */
  async #wait(id: string, status: string, deadline: number, onProgress?: Progress, announce = false):
    Promise<OperationRecord> {
    let pause = announce ? 0 : this.#pollMs;
    let lastError: unknown;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new OperationPendingError(id, status, this.#deadlineMs, lastError);
      if (pause > 0) await sleep(Math.min(pause, remaining));
      pause = this.#pollMs;
      let budget = Math.max(deadline - Date.now(), MIN_POLL_BUDGET_MS);
      if (this.#timeoutMs > 0) budget = Math.min(budget, this.#timeoutMs);
      let rec: OperationRecord;
      try {
        rec = await this.getOperation(id, budget);
      } catch (err) {
        if (err instanceof ConnectionError || (err instanceof APIError && err.temporary)) {
          lastError = err;
          if (err instanceof APIError && err.retryAfter !== undefined && err.retryAfter * 1000 > pause) {
            pause = err.retryAfter * 1000;
          }
          continue;
        }
        throw err;
      }
      lastError = undefined;
      const terminal = TERMINAL_STATUSES.has(rec.status);
      if (!terminal || announce) onProgress?.(rec);
      announce = false;
      if (terminal) return finished(rec);
      status = rec.status;
    }
  }

  async #flushConflict(err: APIError): Promise<OperationFailedError | undefined> {
    const id = typeof err.details["operation_id"] === "string" ? err.details["operation_id"] : "";
    if (err.code === "operation_cancelled") return new OperationFailedError(id, "cancelled", "cancelled");
    if (err.code !== "operation_blocked" && err.code !== "operation_failed") return undefined;
    let code = err.code;
    let category = "";
    if (id) {
      try { // best effort: name the failed operation's own error
        const rec = await this.getOperation(id);
        if (rec.error?.code) ({ code, category } = rec.error);
      } catch {
        // keep the flush's code
      }
    }
    return new OperationFailedError(id, code, "failed", category, err.code === "operation_blocked");
  }

  // --- Experience -----------------------------------------------------------------------------------------------

  /**
   * Proposes Experience candidates from a scope's Sources captured since the last incubation, now instead of at the
   * next schedule (POST /v1/experience/incubate), and waits for the result like flushMemory: the same
   * "Prefer: respond-async" submit, polling, deadline, OperationPendingError and OperationFailedError. Only Sources
   * whose metadata says "kind": "task-outcome" propose lessons; candidate_count is how many pending candidates the
   * window proposed (review them with listExperienceCandidates, approveCandidate, rejectCandidate). status is idle
   * (nothing new, operation_id null) or processed.
   */
  async incubateExperience(scopeId: string, options: { onProgress?: Progress } = {}): Promise<IncubateResult> {
    const answer = await this.#trigger<IncubateResult>("/v1/experience/incubate", scopeId, options.onProgress);
    if (answer.kind === "answered") return answer.body;
    const rec = answer.record;
    const r = rec.result && rec.result.type === "experience_incubation" ? rec.result : null;
    return {
      status: "processed",
      previous_cursor: r?.previous_cursor ?? 0,
      current_cursor: r?.current_cursor ?? 0,
      high_watermark: r?.high_watermark ?? 0,
      processed_source_count: r?.processed_source_count ?? 0,
      candidate_count: r?.candidate_count ?? 0,
      operation_id: rec.operation_id,
    };
  }

  /** A scope's Experience candidates, newest first (GET /v1/experience/candidates). */
  async listExperienceCandidates(scopeId: string, params: { status?: Candidate["status"]; limit?: number } = {}):
    Promise<Candidate[]> {
    const out = await this.#call<{ items: Candidate[] }>("GET", "/v1/experience/candidates",
      { scope_id: scopeId, status: params.status, limit: params.limit });
    return out.items;
  }

  /** Approves a pending candidate (409 candidate_conflict when the version is stale). */
  approveCandidate(candidateId: string, expectedVersion: number): Promise<Candidate> {
    return this.#review(candidateId, "approve", expectedVersion);
  }

  /** Rejects a pending candidate (409 candidate_conflict when the version is stale). */
  rejectCandidate(candidateId: string, expectedVersion: number): Promise<Candidate> {
    return this.#review(candidateId, "reject", expectedVersion);
  }

  #review(candidateId: string, verb: "approve" | "reject", expectedVersion: number): Promise<Candidate> {
    return this.#call("POST", `/v1/experience/candidates/${encodeURIComponent(candidateId)}/${verb}`, undefined,
      { expected_version: expectedVersion });
  }

  // --- Portability ----------------------------------------------------------------------------------------------

  /** A request whose body is returned unread for a 2xx status; an APIError otherwise. Only `signal` bounds it. */
  async #stream(method: string, path: string, init: RequestInit): Promise<Response> {
    const h: Record<string, string> = { Accept: "application/x-ndjson, application/json" };
    if (this.#token) h["Authorization"] = "Bearer " + this.#token;
    Object.assign(h, init.headers);
    let resp: Response;
    try {
      resp = await this.#fetch(this.baseURL + path, { ...init, method, headers: h });
    } catch (err) {
      throw this.#transportError(err);
    }
    if (resp.status < 400) return resp;
    let text: string;
    try {
      text = await resp.text();
    } catch (err) {
      throw this.#transportError(err);
    }
    throw apiError({ status: resp.status, headers: resp.headers, text });
  }

  #transportError(err: unknown): ConnectionError {
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
    const reason = err instanceof Error ? (cause || err.message) : String(err);
    return new ConnectionError(this.#display, reason, timeout, err);
  }

  /**
   * Writes the export stream of a scope (GET /v1/scopes/{scope_id}/export, application/x-ndjson) to `sink` as it
   * arrives, with the entries' vectors when `embeddings` is set, and resolves to the bytes written. Rejects with
   * ExportIncompleteError when the stream ends without its trailer line (the scope changed while the server read it,
   * or the connection broke): what was written is not importable; export again.
   */
  async exportScope(scopeId: string, sink: ExportSink, options: ExportScopeOptions = {}): Promise<number> {
    let path = "/v1/scopes/" + encodeURIComponent(scopeId) + "/export";
    if (options.embeddings) path += "?embeddings=true";
    const init: RequestInit = {};
    if (options.signal) init.signal = options.signal;
    const resp = await this.#stream("GET", path, init);
    let written = 0;
    let tail: Uint8Array = new Uint8Array(0); // the stream's last bytes: enough to hold a trailer line
    if (resp.body) {
      const reader = resp.body.getReader();
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
            throw this.#transportError(err);
          }
          throw new ExportIncompleteError(written, { cause: err }); // the connection broke mid-stream
        }
        if (chunk.done) break;
        await sink.write(chunk.value);
        written += chunk.value.byteLength;
        tail = lastBytes(tail, chunk.value, MAX_TRAILER_BYTES + 2);
      }
    }
    if (!endsWithTrailer(tail)) throw new ExportIncompleteError(written);
    return written;
  }

  /**
   * Imports an export stream into the empty scope (POST /v1/scopes/{scope_id}/import). A refused import changes
   * nothing and rejects with APIError: 422 import_truncated (no trailer), import_checksum_mismatch,
   * import_format_unsupported, import_invalid_record; 409 scope_not_empty, import_id_collision, scope_erasing
   * (details.line names the line).
   */
  async importScope(scopeId: string, stream: ImportStream, options: ImportScopeOptions = {}):
    Promise<ImportScopeResult> {
    const path = "/v1/scopes/" + encodeURIComponent(scopeId) + "/import";
    const init: RequestInit & { duplex?: "half" } = { body: stream as BodyInit,
      headers: { "Content-Type": "application/x-ndjson" } };
    if (typeof ReadableStream !== "undefined" && stream instanceof ReadableStream) init.duplex = "half";
    if (options.signal) init.signal = options.signal;
    const resp = await this.#stream("POST", path, init);
    let text: string;
    try {
      text = await resp.text();
    } catch (err) {
      throw this.#transportError(err);
    }
    return decode<ImportScopeResult>({ status: resp.status, headers: resp.headers, text }, "POST", path);
  }

  // --- Skills ---------------------------------------------------------------------------------------------------

  /** A scope's skills (GET /v1/skills). */
  async listSkills(scopeId: string): Promise<Skill[]> {
    return (await this.#call<{ items: Skill[] }>("GET", "/v1/skills", { scope_id: scopeId })).items;
  }

  /** A skill's revisions, newest first (GET /v1/skills/{skill_name}/revisions). */
  async listSkillRevisions(scopeId: string, name: string): Promise<SkillRevision[]> {
    const path = "/v1/skills/" + encodeURIComponent(name) + "/revisions";
    return (await this.#call<{ items: SkillRevision[] }>("GET", path, { scope_id: scopeId })).items;
  }

  /**
   * Registers an agent installation (POST /v1/skill-targets, admin): the answer carries its one-time
   * enrollment_token; no later call shows it again.
   */
  registerSkillTarget(scopeId: string, agentKind: string, displayName: string): Promise<RegisteredSkillTarget> {
    return this.#call("POST", "/v1/skill-targets", undefined,
      { scope_id: scopeId, agent_kind: agentKind, display_name: displayName });
  }

  /** A scope's targets (GET /v1/skill-targets, admin); never a token. */
  async listSkillTargets(scopeId: string): Promise<SkillTarget[]> {
    return (await this.#call<{ items: SkillTarget[] }>("GET", "/v1/skill-targets", { scope_id: scopeId })).items;
  }

  /** Revokes a target (POST /v1/skill-targets/{target_id}/revoke, admin). */
  revokeSkillTarget(targetId: string): Promise<SkillTarget> {
    return this.#call("POST", "/v1/skill-targets/" + encodeURIComponent(targetId) + "/revoke");
  }

  /**
   * Sets the desired state of a skill on a target (PUT /v1/skill-targets/{target_id}/publications/{skill_name},
   * admin): published at `revision` (0 or absent: follow the current revision), or unpublished.
   */
  publishSkill(targetId: string, name: string, options: { revision?: number; unpublish?: boolean } = {}):
    Promise<SkillPublication> {
    const body: { desired_state: string; revision?: number } = {
      desired_state: options.unpublish ? "unpublished" : "published",
    };
    if (options.revision && options.revision > 0) body.revision = options.revision;
    return this.#call("PUT", "/v1/skill-targets/" + encodeURIComponent(targetId) + "/publications/" +
      encodeURIComponent(name), undefined, body);
  }

  /** A target's publications and their states (GET /v1/skill-targets/{target_id}/publications, admin). */
  async listSkillPublications(targetId: string): Promise<SkillPublication[]> {
    const path = "/v1/skill-targets/" + encodeURIComponent(targetId) + "/publications";
    return (await this.#call<{ items: SkillPublication[] }>("GET", path)).items;
  }

  // --- Runtime --------------------------------------------------------------------------------------------------

  /** The live runtime members (GET /v1/runtime/members). */
  async members(): Promise<Member[]> {
    return (await this.#call<{ items: Member[] }>("GET", "/v1/runtime/members")).items;
  }

  /** Readiness of the replica that answered (GET /health/ready); a 503 answer resolves too (check status). */
  async ready(): Promise<Health> {
    const a = await this.#roundTrip("GET", "/health/ready");
    if (a.status !== 200 && a.status !== 503) throw apiError(a);
    return decode<Health>(a, "GET", "/health/ready");
  }
}

function operationPath(id: string): string {
  return "/v1/operations/" + encodeURIComponent(id);
}

function finished(rec: OperationRecord): OperationRecord {
  if (rec.status === "failed") {
    throw new OperationFailedError(rec.operation_id, rec.error?.code || "failed", "failed", rec.error?.category ?? "");
  }
  if (rec.status === "cancelled") throw new OperationFailedError(rec.operation_id, "cancelled", "cancelled");
  return rec;
}

function decode<T>(a: Answer, method: string, path: string): T {
  try {
    return JSON.parse(a.text) as T;
  } catch (err) {
    throw new APIError(a.status, CODE_UNEXPECTED_RESPONSE,
      `unexpected answer to ${method} ${path} (status ${a.status}): ${(err as Error).message}`, null,
      a.headers.get("X-Request-ID") ?? "");
  }
}

function apiError(a: Answer): APIError {
  const requestId = a.headers.get("X-Request-ID") ?? "";
  const raw = a.headers.get("Retry-After");
  const n = raw === null ? NaN : Number.parseInt(raw.trim(), 10);
  const retryAfter = Number.isFinite(n) && n >= 0 ? n : undefined;
  try {
    const env = JSON.parse(a.text) as Partial<ErrorBody>;
    if (env && typeof env === "object" && env.error && typeof env.error.code === "string" && env.error.code) {
      return new APIError(a.status, env.error.code, env.error.message ?? "", env.error.details ?? null, requestId,
        retryAfter);
    }
  } catch {
    // not the envelope
  }
  return new APIError(a.status, CODE_UNEXPECTED_RESPONSE, `HTTP ${a.status}`, null, requestId, retryAfter);
}

/** The last `max` bytes of tail followed by chunk. */
function lastBytes(tail: Uint8Array, chunk: Uint8Array, max: number): Uint8Array {
  if (chunk.byteLength >= max) return chunk.slice(chunk.byteLength - max);
  const keep = Math.min(tail.byteLength, max - chunk.byteLength);
  const out = new Uint8Array(keep + chunk.byteLength);
  out.set(tail.subarray(tail.byteLength - keep), 0);
  out.set(chunk, keep);
  return out;
}

/** Whether tail (a stream's last bytes) ends with a newline-terminated {"type":"trailer"} line. */
function endsWithTrailer(tail: Uint8Array): boolean {
  const nl = 0x0a;
  if (tail.byteLength === 0 || tail[tail.byteLength - 1] !== nl) return false;
  const body = tail.subarray(0, tail.byteLength - 1);
  const start = body.lastIndexOf(nl);
  const line = body.subarray(start + 1);
  if (line.byteLength > MAX_TRAILER_BYTES) return false;
  try {
    const d: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(line));
    return typeof d === "object" && d !== null && (d as { type?: unknown }).type === "trailer";
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
