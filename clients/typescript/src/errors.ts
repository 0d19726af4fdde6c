/** The code of an APIError whose body was not the API's error envelope (a proxy's HTML page, say). */
export const CODE_UNEXPECTED_RESPONSE = "unexpected_response";

/** Base class of every error this client throws. */
export class PowerContextError extends Error {
  override name = "PowerContextError";
}

/**
 * The server answered with an error: {"error":{"code","message","details"}} and an HTTP status. `code` is one of
 * the API's bounded codes; `requestId` is the answer's X-Request-ID (quote it when reporting a problem);
 * `retryAfter` is the Retry-After of a 429 or 503, in seconds.
 */
export class APIError extends PowerContextError {
  override name = "APIError";
  readonly status: number;
  readonly code: string;
  readonly details: { [key: string]: unknown };
  readonly requestId: string;
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    details: { [key: string]: unknown } | null = null,
    requestId = "",
    retryAfter?: number,
  ) {
    const d = details ?? {};
    const field = typeof d["field"] === "string" ? d["field"] : "";
    const extra = [field ? `field ${field}` : "", requestId ? `request id ${requestId}` : ""].filter(Boolean);
    super(`${code}: ${message}${extra.length ? ` (${extra.join(", ")})` : ""}`);
    this.status = status;
    this.code = code;
    this.details = d;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }

  /** details.field of an invalid_request ("" otherwise). */
  get field(): string {
    const f = this.details["field"];
    return typeof f === "string" ? f : "";
  }

  /** Whether repeating the same request later may succeed (429 or 5xx). */
  get temporary(): boolean {
    return this.status === 429 || this.status >= 500;
  }
}

/** No HTTP answer: the connection was refused, the name did not resolve, or (`timeout`) no answer in time. */
export class ConnectionError extends PowerContextError {
  override name = "ConnectionError";
  readonly url: string;
  readonly timeout: boolean;

  constructor(url: string, reason: string, timeout: boolean, cause?: unknown) {
    super(
      timeout ? `powercontext at ${url} did not answer in time: ${reason}` : `cannot reach powercontext at ${url}: ${reason}`,
      { cause },
    );
    this.url = url;
    this.timeout = timeout;
  }
}

/**
 * The operation was still not done when the operation deadline passed. It keeps running on the server: follow it
 * with getOperation or waitOperation.
 */
export class OperationPendingError extends PowerContextError {
  override name = "OperationPendingError";
  readonly operationId: string;
  readonly status: string;
  readonly deadlineMs: number;
  readonly lastError: unknown;

  constructor(operationId: string, status: string, deadlineMs: number, lastError?: unknown) {
    super(`operation ${operationId} is still ${status || "pending"} after ${deadlineMs / 1000}s`);
    this.operationId = operationId;
    this.status = status;
    this.deadlineMs = deadlineMs;
    this.lastError = lastError;
  }
}

/**
 * The operation failed or was cancelled, or (`blocked`) the flush or incubation was refused because a failed
 * operation holds the scope's next window until it is retried or cancelled. `code` is the operation's error code, or
 * "cancelled".
 */
export class OperationFailedError extends PowerContextError {
  override name = "OperationFailedError";
  readonly operationId: string;
  code: string;
  category: string;
  readonly status: "failed" | "cancelled";
  readonly blocked: boolean;

  constructor(operationId: string, code: string, status: "failed" | "cancelled", category = "", blocked = false) {
    super(
      blocked
        ? `blocked by failed operation ${operationId} (${code}): retry or cancel it`
        : code === "cancelled"
          ? `operation ${operationId} was cancelled`
          : `operation ${operationId} failed: ${code}`,
    );
    this.operationId = operationId;
    this.code = code;
    this.category = category;
    this.status = status;
    this.blocked = blocked;
  }
}

/**
 * An export stream ended without its trailer line: the scope changed while the server read it (or the connection
 * broke). Export again; what was written is not importable (docs/portability.md). `written` is the byte count.
 */
export class ExportIncompleteError extends PowerContextError {
  override name = "ExportIncompleteError";
  readonly written: number;

  constructor(written: number, options?: { cause?: unknown }) {
    super("powercontext: the export stream ended without its trailer", options);
    this.written = written;
  }
}
