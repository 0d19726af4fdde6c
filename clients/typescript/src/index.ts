// TypeScript client of the powercontext HTTP API (fetch only; the wire contract is api/openapi.yaml).
export {
  Client,
  DEFAULT_OPERATION_DEADLINE_MS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  type ClientOptions,
  type ExportScopeOptions,
  type ExportSink,
  type ImportScopeOptions,
  type ImportStream,
  type Progress,
} from "./client.js";
export {
  APIError,
  CODE_UNEXPECTED_RESPONSE,
  ConnectionError,
  ExportIncompleteError,
  OperationFailedError,
  OperationPendingError,
  PowerContextError,
} from "./errors.js";
export * from "./types.js";
