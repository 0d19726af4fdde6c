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
	list_skills                {scope_id, limit?}
	get_skill                  {scope_id, skill_name, revision?}

Each tool calls the same domain service as its HTTP route (sources.Journal.Capture, memory.Reader, memory.Flusher,
experience.Reviews, experience.Incubator, coordinator.Ledger.Get, skills.Service) with the same validation, so a value refused over HTTP is refused here too.

Invariants:
  - A validation failure is a tool error (isError true) whose text names the code, the field and the message
    ("invalid_request: scope_id: must be 1..256 bytes"). Arguments that miss the input schema are checked by the
    server itself before the SDK (checkArguments) and answered in the same form ("invalid_request: limit: must be
    an integer"). Neither is a JSON-RPC protocol error, so a model can read it and correct its call. Input schemas
    give every argument one plain type (inputSchemaFor); an optional argument sent as null is absent.
  - Any other failure is logged with the tool name and answered with one generic text: internal error text never
    reaches the client.
  - In stateless mode (distributed deployments) no session exists: every POST builds a temporary session with
    default initialization, no Mcp-Session-Id is issued or read, GET and DELETE answer 405, and server-to-client
    requests (elicitation, sampling) are unavailable. Any API replica can therefore answer any request, because all
    state lives in the shared database.
  - In stateful mode (single_node) the SDK keeps sessions in memory; idle sessions are closed after
    Deps.SessionIdle. At most Deps.MaxSessions live at once and Deps.MaxSessionsPerPrincipal per principal: a new
    session beyond either closes the same principal's least recently used session with no request in flight
    (whose next request answers 404), never another principal's; with none to give up the initialize is 429
    too_many_sessions (sessionCap, docs/security.md#limits).
  - Event streams (GET on a session) are bounded in total and per principal (429 too_many_streams) and end after
    Deps.StreamIdle without an event, with a last event carrying an id and a retry delay so clients reconnect and
    see progress (streamLimits).
  - Transport refusals that the SDK writes as plain text (wrong Accept or Content-Type, a missing or unknown
    session, a wrong method, a malformed body) reach the client in the API's error shape
    {"error":{"code","message","details"}} with the same status and a fixed message; a JSON-RPC error keeps its
    code and gets the fixed message of that code. The SDK's text never reaches the client.
  - In stateful mode a POST without a session must be initialize; anything else is 400 invalid_request.
*/
package mcp
