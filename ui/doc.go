/*
Package ui is the operations dashboard: plain server-rendered HTML (html/template) with a little vanilla
JavaScript, assets embedded in the binary (no CDN, no build step), mounted by the HTTP server at /ui for roles all
and api.

# Pages

  - /ui                     overview: queue depth and oldest age by (kind, status), live members by role with their
    versions, the current scheduler leader (work-discovery lease holder) and its fence.
  - /ui/operations          operations newest first; filters scope_id, kind, status; keyset paging with the same
    opaque cursor as GET /v1/operations.
  - /ui/operations/{id}     one operation: state, lane position, payload summary, attempts timeline, result, and
    the Retry / Cancel buttons.
  - /ui/blocked             blocked lanes: lanes whose head is failed. Only lane heads can fail (docs/protocol.md#state-machine), so the
    failed items are exactly the blocked lane heads.
  - /ui/login, /ui/logout   browser sign-in with the API token (cookie pc_ui_token).
  - /ui/static/...          embedded CSS and JavaScript.

# Invariants

  - No content. Pages never read Sources, Memory entries or Experience candidates. A payload is shown only as its
    window coordinates (cursor name, generation, after, through) and a result only as its bounded numeric fields;
    anything else in those JSON documents is dropped, not escaped-and-shown.
  - The Operation API's kinds only: memory_flush, experience_incubation and maintenance (the dashboard is for
    admins, who see the system kind too). Any other kind is never listed, counted or shown; its operation page
    answers 404 like the Operation API does.
  - Every write goes through the Operation API. The pages are read-only (GET and HEAD only); the Retry, Cancel and
    Skip buttons (Skip on failed windows; Cancel and Skip ask for a second click) POST {expected_version} — the
    state_version the page was rendered with — to /v1/operations/{id}/retry|cancel|skip, so an operator never acts on a state they did not see: a stale page gets
    409 operation_conflict and a message naming the current status and version.
  - Everything rendered is escaped by html/template; scripts and styles come only from /ui/static (the Content
    Security Policy forbids inline script). Times are UTC; ages are measured on database time.

# Authentication

The API's bearer-token middleware wraps /ui. Browsers cannot send a bearer header on navigation, so
/ui/login?token=T (or its form) sets the HttpOnly, SameSite=Strict cookie pc_ui_token=T (Path=/) and redirects to
/ui. The middleware accepts that cookie (see Credential) on /ui paths and on requests carrying the header
X-PowerContext-UI: 1, which the dashboard's same-origin fetches set and which a cross-site page cannot send without
a CORS preflight this server never grants. With no token configured nothing is needed.
*/
package ui
