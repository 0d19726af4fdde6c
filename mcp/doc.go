/*
Package mcp serves powercontext as a Model Context Protocol server over streamable HTTP (the official Go SDK),
mounted by the HTTP layer at /mcp behind the same auth, rate limit, body limit and request-id middleware as the
REST API.

Tools (docs/api.md#mcp lists their arguments and results):

	capture_source             {scope_id, source_id?, source_type?, content, metadata?}
	get_memory                 {scope_id, revision?}
	search_memory              {scope_id, q, limit?, mode?}
	list_experience_candidates {scope_id, status?}
	memory_history             {scope_id, cursor?, limit?}
	get_context                {scope_id, q?, max_tokens?, mode?}
	flush_memory               {scope_id, wait_seconds?}
	incubate_experience        {scope_id, wait_seconds?}
	get_operation              {operation_id}
	list_sources               {scope_id, after?, limit?}

Each tool calls the same domain service as its HTTP route (sources.Journal.Capture, memory.Reader, memory.Flusher,
experience.Reviews, experience.Incubator, coordinator.Ledger.Get) with the same validation, so a value refused over HTTP is refused here too.

Invariants:
  - A validation failure is a tool error (isError true) whose text names the code, the field and the message
    ("invalid_request: scope_id: must be 1..256 bytes"); a malformed argument object is a tool error from the
    input schema. Neither is a JSON-RPC protocol error, so a model can read it and correct its call.
  - Any other failure is logged with the tool name and answered with one generic text: internal error text never
    reaches the client.
  - In stateless mode (distributed deployments) no session exists: every POST builds a temporary session with
    default initialization, no Mcp-Session-Id is issued or read, GET and DELETE answer 405, and server-to-client
    requests (elicitation, sampling) are unavailable. Any API replica can therefore answer any request, because all
    state lives in the shared database.
  - In stateful mode (single_node) the SDK keeps sessions in memory; idle sessions are closed after
    Deps.SessionIdle, and at most Deps.MaxSessions live at once: a new session beyond the cap closes the least
    recently used one, whose next request answers 404 (docs/security.md#limits).
  - Transport refusals that the SDK writes as plain text (wrong Accept or Content-Type, a missing or unknown
    session, a wrong method) reach the client in the API's error shape {"error":{"code","message","details"}}
    with the same status; JSON-RPC answers are never rewritten.
*/
package mcp
