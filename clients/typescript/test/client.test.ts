// The TypeScript client against a real powercontext server (see server.ts).
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";

import {
  APIError,
  Client,
  ConnectionError,
  OperationPendingError,
  type OperationRecord,
  type SearchMode,
} from "../src/index.js";
import { Server } from "./server.js";

let server: Server;
let pc: Client;

const newScope = () => "ts-" + Math.random().toString(36).slice(2, 14);

before(async () => {
  server = await new Server().start();
  pc = new Client(server.url, { token: server.token, pollIntervalMs: 50 });
});

after(async () => {
  await server?.stop();
});

describe("powercontext client against a real server", () => {
  test("capture is idempotent per source_id and keeps Unicode", async () => {
    const scope = newScope();
    const first = await pc.captureSource({ scope_id: scope, content: "用户喜欢简洁的中文回答。", source_id: "msg-1",
      metadata: { channel: "聊天" } });
    assert.equal(first.created, true);
    assert.equal(first.journal_position, 1);
    const again = await pc.captureSource({ scope_id: scope, content: "用户喜欢简洁的中文回答。", source_id: "msg-1" });
    assert.deepEqual([again.created, again.journal_position], [false, 1]);
    await pc.captureSource({ scope_id: scope, content: "The user works in Shanghai." });

    const page = await pc.listSources(scope, { limit: 1 });
    assert.deepEqual(page.items.map((s) => s.content), ["用户喜欢简洁的中文回答。"]);
    assert.deepEqual(page.items[0]?.metadata, { channel: "聊天" });
    assert.match(page.items[0]?.created_at ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(page.next_after, 1);
    const rest = await pc.listSources(scope, { after: 1 });
    assert.deepEqual(rest.items.map((s) => s.journal_position), [2]);
    assert.equal(rest.next_after, null);
  });

  test("forgetSource redacts Memory and eraseScope empties the scope", async () => {
    const scope = newScope() + "/sub";
    await pc.captureSource({ scope_id: scope, content: "The user prefers metric units.", source_id: "m/1" });
    await pc.flushMemory(scope);
    const forgotten = await pc.forgetSource(scope, "m/1");
    assert.equal(forgotten.journal_position, 1);
    assert.ok(forgotten.operation_id);
    let op = await pc.waitOperation(forgotten.operation_id);
    assert.deepEqual([op.kind, op.status, op.result?.type], ["memory_redact", "succeeded", "memory_redact"]);
    assert.deepEqual((await pc.getMemory(scope)).entries, []);
    const missing = await pc.forgetSource(scope, "nope").then(() => undefined, (e: unknown) => e);
    assert.ok(missing instanceof APIError);
    assert.deepEqual([missing.status, missing.code], [404, "source_not_found"]);
    const erased = await pc.eraseScope(scope);
    assert.equal(erased.scope_id, scope);
    op = await pc.waitOperation(erased.operation_id);
    assert.deepEqual([op.kind, op.status], ["scope_erase", "succeeded"]);
    assert.deepEqual((await pc.listSources(scope)).items, []);
  });

  test("flushMemory polls the operation, then Memory reads and searches", async () => {
    const scope = newScope();
    await pc.captureSource({ scope_id: scope, content: "The user prefers metric units." });
    await pc.captureSource({ scope_id: scope, content: "用户每天早上八点开会。" });
    const seen: OperationRecord[] = [];
    const onProgress = (op: OperationRecord): void => { seen.push(op); }; // a handler typed with the full record
    const result = await pc.flushMemory(scope, { onProgress });
    assert.equal(result.status, "processed");
    assert.equal(result.processed_source_count, 2);
    assert.equal(result.current_cursor, 2);
    assert.ok(result.memory && result.memory.revision >= 1);
    // respond-async: the server answered 202 first and the client polled.
    assert.ok(seen.length >= 1);
    assert.equal(seen[0]?.operation_id, result.operation_id);
    // Every progress record is a full OperationRecord, the first one included (read right after the 202).
    for (const op of seen) {
      assert.deepEqual([op.kind, op.scope_id], ["memory_flush", scope]);
      assert.equal(typeof op.state_version, "number");
      assert.equal(typeof op.attempt_count, "number");
      assert.match(op.created_at, /^\d{4}-/);
    }

    const memory = await pc.getMemory(scope);
    assert.equal(memory.revision, result.memory?.revision);
    const text = memory.entries.map((e) => e.content).join(" ");
    assert.match(text, /metric/);
    assert.match(text, /八点/);
    const found = await pc.searchMemory(scope, "八点");
    assert.equal(found.entries.length, 1);

    const idle = await pc.flushMemory(scope);
    assert.equal(idle.status, "idle");

    const op = await pc.getOperation(result.operation_id ?? "");
    assert.equal(op.status, "succeeded");
    assert.equal(op.result?.type, "memory_flush");
    const listed = await pc.listOperations({ scope_id: scope, kind: "memory_flush" });
    assert.ok(listed.items.some((o) => o.operation_id === result.operation_id));
  });

  test("incubateExperience proposes pending candidates for review, then is idle", async () => {
    const scope = newScope();
    // Nothing captured: idle, answered at once, no operation.
    assert.deepEqual(await pc.incubateExperience(scope), { status: "idle", previous_cursor: 0, current_cursor: 0,
      high_watermark: 0, processed_source_count: 0, candidate_count: 0, operation_id: null });
    // A Source that is not a task outcome: the window is processed, but it proposes nothing.
    await pc.captureSource({ scope_id: scope, content: "The user prefers metric units." });
    const plain = await pc.incubateExperience(scope);
    assert.deepEqual([plain.status, plain.previous_cursor, plain.current_cursor, plain.high_watermark],
      ["processed", 0, 1, 1]);
    assert.deepEqual([plain.processed_source_count, plain.candidate_count], [1, 0]);
    assert.ok(plain.operation_id);
    assert.deepEqual(await pc.listExperienceCandidates(scope), []);

    // A task outcome (metadata kind "task-outcome") proposes one pending lesson citing it.
    const outcome = "Retrying the flaky test twice hid a real race. Always run with -race.";
    const captured = await pc.captureSource({ scope_id: scope, content: outcome, metadata: { kind: "task-outcome" } });
    const seen: OperationRecord[] = [];
    const result = await pc.incubateExperience(scope, { onProgress: (op: OperationRecord) => seen.push(op) });
    assert.equal(result.status, "processed");
    assert.deepEqual([result.previous_cursor, result.current_cursor, result.high_watermark], [1, 2, 2]);
    assert.deepEqual([result.processed_source_count, result.candidate_count], [1, 1]);
    assert.ok(result.operation_id);
    // respond-async: the server answered 202 first and the client polled.
    assert.ok(seen.length >= 1);
    assert.deepEqual([seen[0]?.operation_id, seen[0]?.kind], [result.operation_id, "experience_incubation"]);

    const op = await pc.getOperation(result.operation_id);
    assert.deepEqual([op.kind, op.status], ["experience_incubation", "succeeded"]);
    assert.ok(op.result?.type === "experience_incubation");
    assert.equal(op.result.candidate_count, 1);
    const listed = await pc.listOperations({ scope_id: scope, kind: "experience_incubation" });
    assert.deepEqual(new Set(listed.items.map((o) => o.operation_id)),
      new Set([plain.operation_id, result.operation_id]));

    const pending = await pc.listExperienceCandidates(scope, { status: "pending" });
    assert.equal(pending.length, 1);
    const cand = pending[0];
    assert.ok(cand);
    assert.deepEqual([cand.scope_id, cand.operation_id, cand.status], [scope, result.operation_id, "pending"]);
    assert.deepEqual(cand.cited_positions, [captured.journal_position]);
    assert.match(cand.lesson, /race/);
    const approved = await pc.approveCandidate(cand.candidate_id, cand.state_version);
    assert.deepEqual([approved.status, approved.state_version], ["approved", cand.state_version + 1]);
    const stale = await pc.approveCandidate(cand.candidate_id, cand.state_version)
      .then(() => undefined, (e: unknown) => e);
    assert.ok(stale instanceof APIError, "already approved");
    assert.deepEqual([stale.status, stale.code], [409, "candidate_conflict"]);
    assert.deepEqual(await pc.listExperienceCandidates(scope, { status: "pending" }), []);
    const lessons = (await pc.getContext(scope, { q: "race" })).items.filter((i) => i.type === "lesson");
    assert.deepEqual(lessons.map((i) => i.candidate_id), [cand.candidate_id]);

    // Nothing new since: idle at the cursor, no operation.
    assert.deepEqual(await pc.incubateExperience(scope), { status: "idle", previous_cursor: 2, current_cursor: 2,
      high_watermark: 2, processed_source_count: 0, candidate_count: 0, operation_id: null });
  });

  test("incubateExperience at the deadline rejects with OperationPendingError; waitOperation finishes it", async () => {
    const scope = newScope();
    await pc.captureSource({ scope_id: scope, content: "Pinning the base image fixed the build.",
      metadata: { kind: "task-outcome" } });
    const impatient = new Client(server.url, { token: server.token, operationDeadlineMs: 0 });
    const err = await impatient.incubateExperience(scope).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OperationPendingError, String(err));
    const done = await pc.waitOperation(err.operationId);
    assert.deepEqual([done.kind, done.status], ["experience_incubation", "succeeded"]);
    assert.ok(done.result?.type === "experience_incubation");
    assert.equal(done.result.candidate_count, 1);
    assert.equal((await pc.listExperienceCandidates(scope, { status: "pending" })).length, 1);
  });

  test("Memory history, diff and context", async () => {
    const scope = newScope();
    await pc.captureSource({ scope_id: scope, content: "Staging uses PostgreSQL 16." });
    await pc.captureSource({ scope_id: scope, content: "用户每天早上八点开会。" });
    const first = await pc.flushMemory(scope);
    await pc.captureSource({ scope_id: scope, content: "Alice owns the billing service." });
    const second = await pc.flushMemory(scope);
    const r1 = first.memory?.revision ?? 0;
    const r2 = second.memory?.revision ?? 0;
    assert.equal(r2, r1 + 1);

    const page = await pc.listMemoryRevisions(scope, { limit: 1 });
    assert.deepEqual(page.items.map((r) => r.revision), [r2]);
    assert.deepEqual([page.items[0]?.window_after, page.items[0]?.window_through], [2, 3]);
    assert.equal(page.items[0]?.operation_id, second.operation_id);
    assert.deepEqual(page.items[0]?.evicted, { count: 0, entry_ids: [] });
    assert.ok(page.next_cursor);
    const rest = await pc.listMemoryRevisions(scope, { cursor: page.next_cursor });
    assert.deepEqual(rest.items.map((r) => r.revision), [r1]);
    assert.equal(rest.next_cursor, null);

    const old = await pc.getMemory(scope, { revision: r1 });
    assert.equal(old.revision, r1);
    assert.ok(!old.entries.some((e) => e.content.includes("Alice")));
    const missing = await pc.getMemory(scope, { revision: 99 }).then(() => undefined, (e: unknown) => e);
    assert.ok(missing instanceof APIError);
    assert.deepEqual([missing.status, missing.code], [404, "revision_not_found"]);

    // Entry ids: given in order from 1 and kept from revision to revision.
    const current = await pc.getMemory(scope);
    assert.deepEqual(current.entries.map((e) => e.entry_id), [1, 2, 3]);
    assert.deepEqual(
      old.entries.map((e) => [e.entry_id, e.content]),
      current.entries.slice(0, 2).map((e) => [e.entry_id, e.content]),
    );
    assert.deepEqual(current.evicted, { count: 0, entry_ids: [] });

    const diff = await pc.diffMemory(scope);
    assert.deepEqual([diff.from, diff.to], [r1, r2]);
    assert.ok(diff.added.some((e) => e.content.includes("Alice")));
    assert.deepEqual(diff.added.map((e) => e.entry_id), [3]);
    assert.deepEqual(diff.removed, []);
    const everything = await pc.diffMemory(scope, { from: 0 });
    assert.equal(everything.added.length, (await pc.getMemory(scope)).entries.length);

    const found = await pc.searchMemory(scope, "八点");
    assert.equal(found.entries.length, 1);
    assert.equal(typeof found.entries[0]?.score, "number");
    // The server embeds entries with its built-in local embedder: hybrid by default, both scores.
    assert.deepEqual([found.mode, found.degraded], ["hybrid", false]);
    assert.equal(typeof found.entries[0]?.scores?.fts, "number");
    assert.equal(typeof found.entries[0]?.scores?.semantic, "number");
    // A misspelt word: no full-text match; the local vectors (lexical, typo-tolerant) find it.
    assert.deepEqual((await pc.searchMemory(scope, "PostgreSLQ", { mode: "fts" })).entries, []);
    const typo = await pc.searchMemory(scope, "PostgreSLQ", { mode: "semantic", limit: 1 });
    assert.equal(typo.mode, "semantic");
    assert.ok(typo.entries[0]?.content.includes("PostgreSQL"));
    const badMode = await pc
      .searchMemory(scope, "x", { mode: "vector" as SearchMode })
      .then(() => undefined, (e: unknown) => e);
    assert.ok(badMode instanceof APIError);
    assert.deepEqual([badMode.status, badMode.field], [422, "mode"]);

    const context = await pc.getContext(scope, { q: "八点 开会", max_tokens: 500 });
    assert.equal(context.revision, r2);
    assert.ok(context.used_tokens <= 500);
    assert.equal(context.used_tokens, context.items.reduce((n, i) => n + i.tokens, 0));
    assert.equal(context.items[0]?.type, "memory");
    assert.ok(context.items[0]?.content.includes("八点"));
    assert.equal(context.items[0]?.entry_id, found.entries[0]?.entry_id);
    assert.deepEqual([context.mode, context.degraded], ["hybrid", false]);
    const semantic = await pc.getContext(scope, { q: "PostgreSLQ", mode: "semantic" });
    assert.equal(semantic.mode, "semantic");
    assert.ok(semantic.items[0]?.content.includes("PostgreSQL"));
    const tight = await pc.getContext(scope, { max_tokens: 1 });
    assert.deepEqual(tight.items, []);
    assert.ok(tight.omitted > 0);
    const bad = await pc.getContext(scope, { max_tokens: 0 }).then(() => undefined, (e: unknown) => e);
    assert.ok(bad instanceof APIError);
    assert.equal(bad.status, 422);
  });

  test("the operation deadline rejects with OperationPendingError; waitOperation finishes it", async () => {
    const scope = newScope();
    await pc.captureSource({ scope_id: scope, content: "A fact to flush." });
    const impatient = new Client(server.url, { token: server.token, operationDeadlineMs: 0 });
    const err = await impatient.flushMemory(scope).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OperationPendingError, String(err));
    const done = await pc.waitOperation(err.operationId);
    assert.equal(done.status, "succeeded");
  });

  test("submitFlush answers 202 with Location", async () => {
    const scope = newScope();
    await pc.captureSource({ scope_id: scope, content: "Another fact." });
    const r = await pc.submitFlush(scope, 0);
    assert.equal(r.status, 202);
    if (r.status === 202) {
      assert.equal(r.location, "/v1/operations/" + r.body.operation_id);
      await pc.waitOperation(r.body.operation_id);
    }
  });

  test("a stale version is operation_conflict with details", async () => {
    const scope = newScope();
    await pc.captureSource({ scope_id: scope, content: "Fact." });
    const result = await pc.flushMemory(scope);
    const op = await pc.getOperation(result.operation_id ?? "");
    const err = await pc.cancelOperation(op.operation_id, op.state_version).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof APIError);
    assert.deepEqual([err.status, err.code], [409, "operation_conflict"]);
    assert.equal(err.details["actual_version"], op.state_version);
    assert.ok(err.requestId);
    const skip = await pc.skipOperation(op.operation_id, op.state_version).then(() => undefined, (e: unknown) => e);
    assert.ok(skip instanceof APIError, "only a failed window can be skipped");
    assert.deepEqual([skip.status, skip.code], [409, "operation_conflict"]);
  });

  test("errors carry the code, the field and the request id", async () => {
    const bad = await pc.captureSource({ scope_id: "", content: "x" }).then(() => undefined, (e: unknown) => e);
    assert.ok(bad instanceof APIError);
    assert.deepEqual([bad.status, bad.code, bad.field], [422, "invalid_request", "scope_id"]);
    const missing = await pc.getOperation("no-such-operation").then(() => undefined, (e: unknown) => e);
    assert.ok(missing instanceof APIError && missing.code === "operation_not_found");
    const cand = await pc.approveCandidate("no-such-candidate", 1).then(() => undefined, (e: unknown) => e);
    assert.ok(cand instanceof APIError && cand.code === "candidate_not_found");
    const unauth = await new Client(server.url, { token: "wrong" }).getMemory("s").then(() => undefined, (e: unknown) => e);
    assert.ok(unauth instanceof APIError);
    assert.deepEqual([unauth.status, unauth.code, unauth.temporary], [401, "unauthorized", false]);
    assert.ok(unauth.requestId);
  });

  test("an unreachable server is a ConnectionError", async () => {
    const port = await new Promise<number>((ok) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const a = s.address();
        s.close(() => ok(a && typeof a === "object" ? a.port : 1));
      });
    });
    const err = await new Client(`http://127.0.0.1:${port}`, { timeoutMs: 2000 }).getMemory("s")
      .then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.timeout, false);
  });

  test("runtime and experience reads", async () => {
    const health = await pc.ready();
    assert.equal(health.status, "ready");
    assert.equal(health.checks["database"], "ok");
    const members = await pc.members();
    assert.deepEqual(members.map((m) => m.role), ["all"]);
    assert.deepEqual(await pc.listExperienceCandidates(newScope()), []);
    const memory = await pc.getMemory(newScope());
    assert.equal(memory.revision, null);
    assert.deepEqual(memory.entries, []);
  });
});
