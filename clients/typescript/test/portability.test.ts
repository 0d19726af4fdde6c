// Scope export/import and Skills through the TypeScript client against a real powercontext server (see server.ts).
import assert from "node:assert/strict";
import { createServer, type Server as HTTPServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";

import { APIError, Client, ExportIncompleteError } from "../src/index.js";
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

/** Collects the chunks exportScope writes. */
class Collect {
  chunks: Uint8Array[] = [];
  write(chunk: Uint8Array): void {
    this.chunks.push(chunk);
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

async function exported(): Promise<[string, Buffer]> {
  const scope = newScope();
  await pc.captureSource({ scope_id: scope, content: "The user prefers metric units." });
  await pc.captureSource({ scope_id: scope, content: "用户每天早上八点开会。" });
  await pc.flushMemory(scope);
  const sink = new Collect();
  const n = await pc.exportScope(scope, sink);
  assert.equal(n, sink.bytes().length);
  return [scope, sink.bytes()];
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => undefined, (e: unknown) => e);
}

describe("scope export and import", () => {
  test("export, then import as another scope: the same Memory reads back", async () => {
    const [scope, stream] = await exported();
    const lines = stream.toString("utf8").trimEnd().split("\n");
    assert.match(lines[0] ?? "", /"type":"header"/);
    assert.match(lines[lines.length - 1] ?? "", /"type":"trailer"/);

    const target = newScope();
    const result = await pc.importScope(target, new Uint8Array(stream));
    assert.deepEqual([result.scope_id, result.source_scope_id], [target, scope]);
    assert.equal(result.counts.sources, 2);
    assert.ok(result.counts.revisions >= 1);
    assert.ok(result.operation_id);
    const [before, afterImport] = [await pc.getMemory(scope), await pc.getMemory(target)];
    assert.equal(afterImport.revision, before.revision);
    assert.deepEqual(afterImport.entries, before.entries);
    assert.deepEqual((await pc.listSources(target)).items.map((s) => s.content),
      (await pc.listSources(scope)).items.map((s) => s.content));

    // The target is no longer empty: a second import (from a ReadableStream this time) is refused.
    const err = await rejection(pc.importScope(target, new Blob([new Uint8Array(stream)]).stream()));
    assert.ok(err instanceof APIError, String(err));
    assert.deepEqual([err.status, err.code], [409, "scope_not_empty"]);
  });

  test("a stream without its trailer is refused by the server and by the client", async () => {
    const [, stream] = await exported();
    const text = stream.toString("utf8");
    const cut = Buffer.from(text.slice(0, text.trimEnd().lastIndexOf("\n") + 1), "utf8");
    const err = await rejection(pc.importScope(newScope(), cut.toString("utf8")));
    assert.ok(err instanceof APIError, String(err));
    assert.deepEqual([err.status, err.code], [422, "import_truncated"]);

    // Client-side: a server whose export stream stops before the trailer.
    const fake: HTTPServer = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/x-ndjson" });
      res.end(cut);
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    try {
      const port = (fake.address() as AddressInfo).port;
      const sink = new Collect();
      const inc = await rejection(new Client(`http://127.0.0.1:${port}`).exportScope("s", sink));
      assert.ok(inc instanceof ExportIncompleteError, String(inc));
      assert.equal(inc.written, cut.length);
      assert.deepEqual(sink.bytes(), cut);
    } finally {
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  });

  test("export errors map to APIError", async () => {
    const err = await rejection(new Client(server.url, { token: "wrong" }).exportScope(newScope(), new Collect()));
    assert.ok(err instanceof APIError, String(err));
    assert.deepEqual([err.status, err.code], [401, "unauthorized"]);
  });
});

describe("skills", () => {
  test("an approved lesson becomes a packaged skill", async () => {
    const scope = newScope();
    assert.deepEqual(await pc.listSkills(scope), []);
    await pc.captureSource({ scope_id: scope, content: "Retrying the flaky test twice hid a real race. Always run with -race.",
      metadata: { kind: "task-outcome" } });
    await pc.incubateExperience(scope);
    const cand = (await pc.listExperienceCandidates(scope, { status: "pending" }))[0];
    assert.ok(cand);
    await pc.approveCandidate(cand.candidate_id, cand.state_version);

    const deadline = Date.now() + 30_000;
    let skills = await pc.listSkills(scope);
    while (skills.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      skills = await pc.listSkills(scope);
    }
    assert.equal(skills.length, 1, "no skill packaged within 30 s");
    const skill = skills[0];
    assert.ok(skill);
    assert.deepEqual([skill.scope_id, skill.current_revision], [scope, 1]);
    const revisions = await pc.listSkillRevisions(scope, skill.name);
    assert.deepEqual(revisions.map((r) => r.revision), [1]);
    assert.deepEqual(revisions[0]?.source_candidate_ids, [cand.candidate_id]);
    assert.match(revisions[0]?.tree_digest ?? "", /^[0-9a-f]{64}$/);

    const target = (await pc.registerSkillTarget(scope, "claude_code", "ci")).target;
    const pub = await pc.publishSkill(target.target_id, skill.name);
    assert.deepEqual([pub.skill_name, pub.desired_state, pub.desired_revision, pub.observed_revision],
      [skill.name, "published", 1, null]);
    assert.deepEqual((await pc.listSkillPublications(target.target_id)).map((p) => p.skill_name), [skill.name]);
    const off = await pc.publishSkill(target.target_id, skill.name, { unpublish: true });
    assert.equal(off.desired_state, "unpublished");
  });

  test("register, list and revoke a target", async () => {
    const scope = newScope();
    const reg = await pc.registerSkillTarget(scope, "claude_code", "laptop");
    assert.ok(reg.enrollment_token);
    const t = reg.target;
    assert.deepEqual([t.scope_id, t.agent_kind, t.display_name, t.enrolled], [scope, "claude_code", "laptop", false]);
    assert.ok(t.enrollment_expires_at);
    assert.equal(t.revoked_at, null);
    const listed = await pc.listSkillTargets(scope);
    assert.deepEqual(listed.map((x) => x.target_id), [t.target_id]);
    assert.ok(!JSON.stringify(listed).includes(reg.enrollment_token), "the token is shown once");
    assert.deepEqual(await pc.listSkillPublications(t.target_id), []);

    const revoked = await pc.revokeSkillTarget(t.target_id);
    assert.ok(revoked.revoked_at);
    const err = await rejection(pc.registerSkillTarget(scope, "Not A Kind", "x"));
    assert.ok(err instanceof APIError, String(err));
    assert.deepEqual([err.status, err.code], [422, "invalid_request"]);
  });
});
