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
  - /ui/experience          a scope's Experience candidates, pending first, then newest first; filters scope_id
    and status; keyset paging with its own opaque cursor. Ids, states and counts only, never a lesson. Without a
    scope it lists the scopes of recent incubations with their pending counts.
  - /ui/experience/{id}     one candidate: its title and lesson, the journal positions it cites, and the Approve /
    Reject forms (POST /ui/experience/{id}/approve|reject).
  - /ui/skills              a scope's skills (current revision, digests, revision count) and, per target, each
    publication's state, with the Publish / Unpublish / Roll back forms (POST /ui/skills/targets/{id}/publish|unpublish)
    and Revoke (POST /ui/skills/targets/{id}/revoke). Names, revisions, digests and states only, never a package's
    files. Without a scope it lists the scopes of recent skill packaging.
  - /ui/scopes/{id}/export  the scope's export as a download (not a page): the stream of GET /v1/scopes/{id}/export,
    recorded as a scope_export operation; an admin without scopes or a token whose scopes include the scope.
  - /ui/login, /ui/logout   sign-in form (GET) exchanging an admin token for a database session (POST); POST
    /ui/logout ends it (cookie pc_ui_session).
  - /ui/static/...          embedded CSS and JavaScript.

# Invariants

  - No content, with one exception. Pages never read Sources or Memory entries. A payload is shown only as its
    window coordinates (cursor name, generation, after, through) and a result only as its bounded numeric fields;
    anything else in those JSON documents is dropped, not escaped-and-shown. The exception is a candidate's own
    page, which shows the lesson an admin is asked to approve (its title and text, escaped as text; the browser
    title names only the candidate's id). The candidate list shows no text. The export download carries a scope's
    content, but it is a file, never rendered.
  - The Operation API's kinds only: memory_flush, experience_incubation and maintenance (the dashboard is for
    admins, who see the system kind too). Any other kind is never listed, counted or shown; its operation page
    answers 404 like the Operation API does.
  - Every write names the version it was shown. Operation writes go through the Operation API: the pages are
    read-only (GET and HEAD only); the Retry, Cancel and Skip buttons (Skip on failed windows; Cancel and Skip ask
    for a second click) POST {expected_version} — the state_version the page was rendered with — to
    /v1/operations/{id}/retry|cancel|skip, so an operator never acts on a state they did not see: a stale page gets
    409 operation_conflict and a message naming the current status and version. The one write the dashboard
    serves itself is a candidate review: the candidate page's Approve and Reject are plain forms (no script
    needed) posting expected_version to /ui/experience/{id}/approve|reject, which call the same review as
    POST /v1/experience/candidates/{id}/approve|reject; success redirects to the candidate's page (303), a stale
    version renders that page at its current state with a conflict message (409) and changes nothing. Those posts
    are guarded like the sign-in form: the SameSite=Strict session cookie is not sent from another site, and a post
    whose Sec-Fetch-Site or Origin names another site is refused (403). The Skills forms work the same way with the
    generation the page showed: skills.Service.PublishAt writes only at that generation (a stale page is a 409 page
    at the current state), and revoking a target revoked meanwhile is a 409 too.
  - Everything rendered is escaped by html/template; scripts and styles come only from /ui/static (the Content
    Security Policy forbids inline script). Times are UTC; ages are measured on database time.

# Authentication

The API's bearer-token middleware wraps /ui. Browsers cannot send a bearer header on navigation, so the sign-in
form (GET /ui/login; a token is never read from a URL) posts the token to POST /ui/login, which checks it against
the configured principals (admin role, no scope restriction) and opens a session (Sessions, docs/security.md#dashboard-sessions):
a random 256-bit id in the HttpOnly, SameSite=Strict cookie pc_ui_session (Path=/, Max-Age the session lifetime,
Secure over TLS or behind a trusted proxy that says https), its SHA-256 in the database table pc_ui_sessions with an
expiry on the database clock. Every API replica on the same database accepts it; POST /ui/logout deletes it. The
middleware resolves the cookie (one primary-key read) on /ui paths and on requests carrying the header
X-PowerContext-UI: 1, which the dashboard's same-origin fetches set and which a cross-site page cannot send without
a CORS preflight this server never grants — that is why the cookie's path is / and not /ui. A session ends when it
expires, on logout, or when its token is removed from or replaced in the configuration. With no token configured
nothing is needed.
*/
package ui
