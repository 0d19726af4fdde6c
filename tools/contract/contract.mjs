#!/usr/bin/env node
// Contract test: replays the README quickstart and the documented error cases through Stoplight Prism's validating
// proxy (`prism proxy api/openapi.yaml <server> --errors`) in front of real powercontext servers, and fails on any
// request or response that departs from api/openapi.yaml. `make contract-test` runs it (after `make build`) and then
// runs it again with --broken-spec, which checks that the tester itself catches a mismatch.
//
//   node contract.mjs                 # the contract test
//   node contract.mjs --broken-spec   # self-test: a deliberately wrong copy of the document must be caught
//   node contract.mjs --spec FILE     # another document (for example an older api/openapi.yaml)
//
// The servers are bin/powercontext (or $POWERCONTEXT_BIN), single_node on an embedded SQLite database in a temporary
// directory, on free loopback ports: one without a token (the quickstart as written) and one with tokens (401, 403,
// 429). Three proxies validate them: "strict" (requests and responses, for requests the document allows), "lax"
// (responses only, for requests that are wrong on purpose: 400, 413, 415, 422) and "auth" (in front of the server
// with tokens). Prism answers some requests itself, so those are not covered here but by the Go handler tests
// (handlers/openapi_test.go): an unknown path (404) or method (405), a body that is not JSON at all, and a foreign
// Host header (403 host_not_allowed; the proxy rewrites Host).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..");
const brokenSpec = process.argv.includes("--broken-spec");
const bin = process.env.POWERCONTEXT_BIN || join(repo, "bin", "powercontext");
const prismMain = join(here, "node_modules", "@stoplight", "prism-cli", "dist", "index.js");
const work = mkdtempSync(join(tmpdir(), "pc-contract-"));
const children = [];
const READY_MS = 60_000; // a deadline for start-up on a loaded machine, not a speed expectation
const REQUEST_MS = 30_000;

function fail(msg) {
  console.error(`contract-test: FAIL: ${msg}`);
  cleanup();
  process.exit(1);
}

function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
process.on("SIGINT", () => { cleanup(); process.exit(130); });

function freePort() {
  return new Promise((ok, no) => {
    const s = createServer();
    s.once("error", no);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => ok(port)); });
  });
}

function logTail(file, lines = 30) {
  try { return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n"); } catch { return ""; }
}

// start runs a child with its output in a log file and waits until url answers 200.
async function start(name, cmd, args, env, url) {
  const log = join(work, `${name}.log`);
  const fd = openSync(log, "a");
  const child = spawn(cmd, args, { env, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  children.push(child);
  const deadline = Date.now() + READY_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200) return;
    } catch { /* not listening yet */ }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  fail(`${name} did not become ready at ${url}; its log:\n${logTail(log)}`);
}

function serverEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("POWERCONTEXT_")) env[k] = v;
  return { ...env, ...extra };
}

async function startServer(name, extraArgs = [], extraEnv = {}) {
  const port = await freePort();
  const dir = mkdtempSync(join(work, `${name}-`));
  const url = `http://127.0.0.1:${port}`;
  await start(name, bin, ["server", "run", "--database-url", `sqlite://${dir}/pc.db`, "--listen", `127.0.0.1:${port}`,
    ...extraArgs], serverEnv(extraEnv), `${url}/health/ready`);
  return url;
}

async function startPrism(name, spec, upstream, extraArgs = []) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await start(`prism-${name}`, process.execPath, [prismMain, "proxy", spec, upstream, "--errors", "-h", "127.0.0.1",
    "-p", String(port), "--verboseLevel", "warn", ...extraArgs], { ...process.env, SCARF_ANALYTICS: "false" },
  `${url}/health/live`);
  return url;
}

// The quickstart's curl commands, read from the README so the test replays what a new user types.
function quickstart() {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  const block = readme.split("## Quickstart (verbatim)")[1]?.split("```sh\n")[1]?.split("```")[0];
  if (!block) fail("README.md has no Quickstart (verbatim) block");
  const cmds = [];
  for (const line of block.replace(/\\\n\s*/g, " ").split("\n")) {
    if (!line.startsWith("curl ")) continue;
    const words = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
    const req = { method: "GET", headers: {}, body: undefined, path: "" };
    for (let i = 1; i < words.length; i++) {
      const w = words[i];
      if (w === "-X") req.method = words[++i];
      else if (w === "-H") { const [k, ...v] = words[++i].split(":"); req.headers[k.trim()] = v.join(":").trim(); }
      else if (w === "-d") req.body = words[++i];
      else if (w.startsWith("-")) continue;
      else req.path = w.replace(/^(https?:\/\/)?localhost:8080/, "");
    }
    if (req.body !== undefined && req.method === "GET") req.method = "POST";
    cmds.push({ name: `quickstart: ${req.method} ${req.path}`, ...req, expect: [200, 201, 202] });
  }
  if (cmds.length < 4) fail(`the README quickstart has ${cmds.length} curl commands; expected at least 4`);
  return cmds;
}

let exchanges = 0;
let lastHeaders = new Headers();
const violations = [];

// send makes one request through a proxy and records every contract violation Prism reports (its sl-violations
// header, or the problem document it answers with under --errors) and any status other than the expected ones.
async function send(proxy, c) {
  const headers = { ...c.headers };
  if (c.token) headers.Authorization = `Bearer ${c.token}`;
  let body = c.body;
  if (body !== undefined && typeof body !== "string") {
    body = JSON.stringify(body);
    headers["Content-Type"] ??= "application/json";
  }
  let r;
  try {
    r = await fetch(proxy + c.path, { method: c.method, headers, body, signal: AbortSignal.timeout(REQUEST_MS) });
  } catch (e) {
    violations.push(`${c.name}: no answer through the proxy (${e.message})`);
    return undefined;
  }
  exchanges++;
  const text = await r.text();
  let json;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  const reported = [];
  const header = r.headers.get("sl-violations");
  if (header) {
    try { reported.push(...JSON.parse(header)); } catch { reported.push({ message: header }); }
  }
  if (typeof json?.type === "string" && json.type.startsWith("https://stoplight.io/prism/errors")) {
    reported.push(...(json.validation ?? [{ message: `${json.title}: ${json.detail}` }]));
  }
  const seen = new Set();
  for (const v of reported) {
    const line = `${(v.location ?? []).join(".")}: ${v.message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    violations.push(`${c.name} → ${r.status}: ${v.severity ?? "Error"} ${line}`);
  }
  if (!reported.length && c.expect && !c.expect.includes(r.status)) {
    violations.push(`${c.name}: status ${r.status}, expected ${c.expect.join(" or ")}: ${text.slice(0, 300)}`);
  }
  if (!reported.length && c.code && json?.error?.code !== c.code) {
    violations.push(`${c.name}: error code ${json?.error?.code}, expected ${c.code}`);
  }
  lastHeaders = r.headers;
  return json;
}

async function main() {
  if (!existsSync(bin)) fail(`${bin} not found: run make build (or set POWERCONTEXT_BIN)`);
  if (!existsSync(prismMain)) fail(`Prism is not installed: run npm ci in ${here}`);
  const specArg = process.argv.indexOf("--spec");
  let spec = specArg > 0 ? resolve(process.argv[specArg + 1] ?? "") : join(repo, "api", "openapi.yaml");
  if (brokenSpec) {
    // A response member typed wrongly: every capture's answer departs from this copy.
    const doc = readFileSync(spec, "utf8");
    const wrong = doc.replace(/(\n    CaptureSourceResponse:[\s\S]*?\n        journal_position: )\{[^}\n]*\}/, "$1{type: string}");
    if (wrong === doc) fail("--broken-spec: CaptureSourceResponse.journal_position not found in api/openapi.yaml");
    spec = join(work, "broken-openapi.yaml");
    writeFileSync(spec, wrong);
  }

  const admin = randomBytes(24).toString("hex");
  const agent = randomBytes(24).toString("hex");
  const limited = randomBytes(24).toString("hex");
  const tokens = JSON.stringify([
    { name: "team-a", role: "agent", token: agent, scopes: ["team-a/"] },
    { name: "limited", role: "agent", token: limited, rate_limit: { requests: 1, window_seconds: 3600 } },
  ]);
  const [open, guarded] = await Promise.all([
    startServer("server-open"),
    brokenSpec ? undefined : startServer("server-tokens", ["--auth-token", admin], { POWERCONTEXT_AUTH_TOKENS: tokens }),
  ]);
  const [strict, lax, auth] = await Promise.all([
    startPrism("strict", spec, open),
    brokenSpec ? undefined : startPrism("lax", spec, open, ["--validate-request=false"]),
    brokenSpec ? undefined : startPrism("auth", spec, guarded),
  ]);

  // The quickstart as written: no token, a loopback single_node server.
  let flush;
  for (const c of quickstart()) {
    const res = await send(strict, c);
    if (c.path === "/v1/memory/flush") flush = res;
  }
  if (brokenSpec) {
    cleanup();
    if (violations.length === 0) {
      console.error("contract-test --broken-spec: FAIL: the tester did not notice a response that departs from the document");
      process.exit(1);
    }
    console.log(`contract-test --broken-spec: ok, the tester caught the broken document (${violations.length} violations, e.g. ${violations[0]})`);
    return;
  }

  const missing = "00000000-0000-4000-8000-000000000000";
  const opID = flush?.operation_id;
  const valid = [
    { name: "list Sources", method: "GET", path: "/v1/sources?scope_id=demo&after=0&limit=10", expect: [200] },
    { name: "capture again (idempotent)", method: "POST", path: "/v1/sources",
      body: { scope_id: "demo", source_id: "msg-1", content: "Staging uses PostgreSQL 17 now." }, expect: [201] },
    { name: "capture the same source_id", method: "POST", path: "/v1/sources",
      body: { scope_id: "demo", source_id: "msg-1", content: "Staging uses PostgreSQL 17 now." }, expect: [200] },
    { name: "flush without waiting", method: "POST", path: "/v1/memory/flush", headers: { Prefer: "respond-async" },
      body: { scope_id: "demo" }, expect: [200, 202] },
    { name: "flush and wait", method: "POST", path: "/v1/memory/flush", headers: { Prefer: "wait=10" },
      body: { scope_id: "demo" }, expect: [200, 202] },
    { name: "read Memory at revision 1", method: "GET", path: "/v1/memory?scope_id=demo&revision=1", expect: [200] },
    { name: "list revisions", method: "GET", path: "/v1/memory/revisions?scope_id=demo&limit=5", expect: [200] },
    { name: "diff", method: "GET", path: "/v1/memory/diff?scope_id=demo&from=0&to=1", expect: [200] },
    { name: "search fts", method: "GET", path: "/v1/memory/search?scope_id=demo&q=PostgreSQL&mode=fts&limit=5", expect: [200] },
    { name: "context", method: "GET", path: "/v1/context?scope_id=demo&q=staging&max_tokens=500", expect: [200] },
    { name: "incubate", method: "POST", path: "/v1/experience/incubate", body: { scope_id: "demo" }, expect: [200, 202] },
    { name: "list candidates", method: "GET", path: "/v1/experience/candidates?scope_id=demo&limit=10", expect: [200] },
    { name: "list Operations", method: "GET", path: "/v1/operations?scope_id=demo&kind=memory_flush&limit=5", expect: [200] },
    { name: "members", method: "GET", path: "/v1/runtime/members", expect: [200] },
    { name: "live", method: "GET", path: "/health/live", expect: [200] },
    { name: "ready", method: "GET", path: "/health/ready", expect: [200] },
    { name: "metrics", method: "GET", path: "/metrics", expect: [200] },
    { name: "openapi.json", method: "GET", path: "/openapi.json", expect: [200] },
    // Documented errors a valid request can meet.
    { name: "404 operation_not_found", method: "GET", path: `/v1/operations/${missing}`, expect: [404], code: "operation_not_found" },
    { name: "404 revision_not_found", method: "GET", path: "/v1/memory?scope_id=demo&revision=999", expect: [404], code: "revision_not_found" },
    { name: "404 source_not_found", method: "DELETE", path: "/v1/sources/no-such-source?scope_id=demo", expect: [404], code: "source_not_found" },
    { name: "404 candidate_not_found", method: "POST", path: `/v1/experience/candidates/${missing}/approve`,
      body: { expected_version: 1 }, expect: [404], code: "candidate_not_found" },
    { name: "forget a Source", method: "DELETE", path: "/v1/sources/msg-1?scope_id=demo", expect: [200, 202] },
    { name: "erase a scope", method: "DELETE", path: "/v1/scopes/erase-me", expect: [202] },
  ];
  if (opID) {
    valid.push({ name: "get an Operation", method: "GET", path: `/v1/operations/${opID}`, expect: [200] });
    valid.push({ name: "409 operation_conflict (cancel a finished flush)", method: "POST",
      path: `/v1/operations/${opID}/cancel`, body: { expected_version: 1 }, expect: [409], code: "operation_conflict" });
  } else {
    violations.push("quickstart: the flush answered no operation_id");
  }
  for (const c of valid) await send(strict, c);

  // MCP over streamable HTTP (single_node keeps sessions).
  const mcpHeaders = { Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" };
  await send(strict, { name: "MCP initialize", method: "POST", path: "/mcp", headers: mcpHeaders, expect: [200],
    body: { jsonrpc: "2.0", id: 1, method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "contract-test", version: "1" } } } });
  const session = lastHeaders.get("mcp-session-id");
  if (!session) violations.push("MCP initialize: no Mcp-Session-Id header");
  const inSession = { ...mcpHeaders, "Mcp-Session-Id": session ?? "" };
  await send(strict, { name: "MCP initialized", method: "POST", path: "/mcp", headers: inSession, expect: [202],
    body: { jsonrpc: "2.0", method: "notifications/initialized" } });
  await send(strict, { name: "MCP tools/list", method: "POST", path: "/mcp", headers: inSession, expect: [200],
    body: { jsonrpc: "2.0", id: 2, method: "tools/list" } });
  await send(strict, { name: "MCP end the session", method: "DELETE", path: "/mcp", headers: inSession, expect: [204] });
  await send(strict, { name: "MCP 404 unknown session", method: "DELETE", path: "/mcp",
    headers: { "Mcp-Session-Id": "no-such-session" }, expect: [404] });
  await send(strict, { name: "MCP 400 stream without a session", method: "GET", path: "/mcp",
    headers: { Accept: "text/event-stream" }, expect: [400] });

  // Requests that are wrong on purpose: the proxy checks only the answers.
  const wrong = [
    { name: "400 invalid_json", method: "POST", path: "/v1/sources", headers: { "Content-Type": "application/json" },
      body: "[1]", expect: [400], code: "invalid_json" },
    { name: "413 payload_too_large", method: "POST", path: "/v1/sources",
      body: { scope_id: "demo", content: "x".repeat(1_200_000) }, expect: [413], code: "payload_too_large" },
    { name: "415 unsupported_media_type", method: "POST", path: "/v1/sources", headers: { "Content-Type": "text/plain" },
      body: "Staging uses PostgreSQL 16.", expect: [415], code: "unsupported_media_type" },
    { name: "422 invalid_request (no content)", method: "POST", path: "/v1/sources", body: { scope_id: "demo" },
      expect: [422], code: "invalid_request" },
    { name: "422 invalid_request (no q)", method: "GET", path: "/v1/memory/search?scope_id=demo", expect: [422], code: "invalid_request" },
    { name: "422 invalid_request (limit 0)", method: "GET", path: "/v1/sources?scope_id=demo&limit=0", expect: [422], code: "invalid_request" },
    { name: "422 invalid_request (no scope_id)", method: "GET", path: "/v1/memory", expect: [422], code: "invalid_request" },
  ];
  for (const c of wrong) await send(lax, c);

  // A server with tokens.
  const guardedCases = [
    { name: "401 unauthorized (no token)", method: "GET", path: "/v1/memory?scope_id=team-a/x", expect: [401], code: "unauthorized" },
    { name: "401 unauthorized (wrong token)", method: "GET", path: "/v1/memory?scope_id=team-a/x", token: "f".repeat(48),
      expect: [401], code: "unauthorized" },
    { name: "admin token", method: "GET", path: "/v1/memory?scope_id=team-a/x", token: admin, expect: [200] },
    { name: "agent within its scopes", method: "POST", path: "/v1/sources", token: agent,
      body: { scope_id: "team-a/x", content: "Releases ship on Tuesdays." }, expect: [201] },
    { name: "403 forbidden (scope outside the token's)", method: "GET", path: "/v1/memory?scope_id=team-b/x", token: agent,
      expect: [403], code: "forbidden" },
    { name: "403 forbidden (admin route)", method: "GET", path: "/v1/runtime/members", token: agent, expect: [403], code: "forbidden" },
    { name: "rate-limited token, first request", method: "GET", path: "/v1/memory?scope_id=x", token: limited, expect: [200] },
    { name: "429 rate_limited", method: "GET", path: "/v1/memory?scope_id=x", token: limited, expect: [429], code: "rate_limited" },
  ];
  for (const c of guardedCases) await send(auth, c);

  cleanup();
  if (violations.length) {
    console.error(`contract-test: FAIL: ${violations.length} departures from api/openapi.yaml in ${exchanges} exchanges:`);
    for (const v of violations) console.error(`  - ${v}`);
    process.exit(1);
  }
  console.log(`contract-test: ok, ${exchanges} exchanges through Prism's validating proxy, no violation`);
}

main().catch((e) => fail(e.stack || String(e)));
