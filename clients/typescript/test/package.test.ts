// The package as a user gets it: `npm pack`, installed from the tarball into a fresh consumer project, then
// require()d (CommonJS) and imported (ES module) by plain Node against a real server, and a TypeScript consumer of
// both formats type-checked with strict tsc (including a progress handler typed `(op: OperationRecord) => void`).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import { Server } from "./server.js";

// build-test/test/package.test.js → the package directory is two levels up.
const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const tsc = createRequire(join(packageDir, "package.json")).resolve("typescript/bin/tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

let server: Server;
let work: string;
let consumer: string;

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  }
}

// The same calls from both module formats: a capture, a flush whose progress handler checks it gets full records,
// and a ConnectionError that is an instance of the module's own class. Prints one JSON line.
const scenario = (load: string) => `${load}
const onProgress = (op) => {
  if (typeof op.state_version !== "number" || typeof op.created_at !== "string") throw new Error("partial record");
  seen.push(op.status);
};
const seen = [];
const pc = new pkg.Client(process.env.PC_URL, { token: process.env.PC_TOKEN, pollIntervalMs: 50 });
const scope = "pack-" + Math.random().toString(36).slice(2, 12);
await pc.captureSource({ scope_id: scope, content: "The user prefers metric units." });
const flushed = await pc.flushMemory(scope, { onProgress });
const unreachable = await new pkg.Client("http://127.0.0.1:9", { timeoutMs: 5000 }).ready().then(() => null, (e) => e);
console.log(JSON.stringify({ status: flushed.status, processed: flushed.processed_source_count, seen: seen.length,
  connectionError: unreachable instanceof pkg.ConnectionError && unreachable instanceof pkg.PowerContextError }));
`;

// A strict consumer: the handler is typed with the full OperationRecord.
const consumerSource = `import { Client, ConnectionError, type OperationRecord, type Progress } from "@powercontext/client";

export async function follow(url: string): Promise<number> {
  const pc = new Client(url, { token: "t", operationDeadlineMs: 1000 });
  const statuses: string[] = [];
  const onProgress = (op: OperationRecord): void => {
    statuses.push(op.status + "@" + op.state_version);
  };
  const asProgress: Progress = onProgress;
  const flushed = await pc.flushMemory("scope", { onProgress });
  const incubated = await pc.incubateExperience("scope", { onProgress: asProgress });
  const op = await pc.waitOperation(flushed.operation_id ?? "", { onProgress });
  try {
    await pc.ready();
  } catch (err) {
    if (err instanceof ConnectionError) return -1;
  }
  return statuses.length + incubated.candidate_count + op.attempt_count;
}
`;

before(async () => {
  server = await new Server().start();
  work = mkdtempSync(join(tmpdir(), "pc-ts-pack-"));
  // npm pack runs the prepack script (npm run build): both formats are built from the sources under test.
  const packed = JSON.parse(run(npm, ["pack", "--json", "--pack-destination", work, "--loglevel=error"], packageDir)) as
    { filename: string; files: { path: string }[] }[];
  const info = packed[0];
  assert.ok(info, "npm pack printed its tarball");
  const files = new Set(info.files.map((f) => f.path));
  for (const f of ["dist/esm/index.js", "dist/esm/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts",
    "dist/cjs/package.json", "package.json"]) {
    assert.ok(files.has(f), `the tarball holds ${f}`);
  }
  consumer = join(work, "consumer");
  mkdirSync(consumer);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  // The package has no runtime dependencies: installing its tarball needs no registry.
  run(npm, ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", join(work, info.filename)],
    consumer);
});

after(async () => {
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the packed package in a consumer project", () => {
  const env = () => ({ ...process.env, PC_URL: server.url, PC_TOKEN: server.token });

  test("require() loads the CommonJS build", () => {
    const file = join(consumer, "use.cjs");
    writeFileSync(file, `const pkg = require("@powercontext/client");
if (typeof pkg.Client !== "function") throw new Error("no Client");
(async () => {
${scenario("")}
})().catch((err) => { console.error(err); process.exit(1); });
`);
    const out = JSON.parse(run(process.execPath, [file], consumer, env()));
    assert.deepEqual(out, { status: "processed", processed: 1, seen: out.seen, connectionError: true });
    assert.ok(out.seen >= 1, "onProgress saw the operation");
    // Node picked the CommonJS files.
    const resolved = run(process.execPath, ["-p", `require.resolve("@powercontext/client")`], consumer).trim();
    assert.match(resolved, /dist[\\/]cjs[\\/]index\.js$/);
  });

  test("import loads the ES module build", () => {
    const file = join(consumer, "use.mjs");
    writeFileSync(file, scenario(`import * as pkg from "@powercontext/client";`));
    const out = JSON.parse(run(process.execPath, [file], consumer, env()));
    assert.deepEqual(out, { status: "processed", processed: 1, seen: out.seen, connectionError: true });
    assert.ok(out.seen >= 1, "onProgress saw the operation");
    const resolved = run(process.execPath, ["--input-type=module", "-e",
      `console.log(import.meta.resolve("@powercontext/client"))`], consumer).trim();
    assert.match(resolved, /dist\/esm\/index\.js$/);
  });

  test("a strict TypeScript consumer type-checks against both formats", () => {
    // consumer.mts is an ES module (types from dist/esm), consumer.cts CommonJS (types from dist/cjs).
    writeFileSync(join(consumer, "consumer.mts"), consumerSource);
    writeFileSync(join(consumer, "consumer.cts"), consumerSource);
    writeFileSync(join(consumer, "tsconfig.json"), JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2022", "DOM"],
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
        types: [],
      },
      files: ["consumer.mts", "consumer.cts"],
    }));
    const explained = run(process.execPath, [tsc, "-p", "tsconfig.json", "--explainFiles"], consumer);
    // Each file resolved the declarations of its own format.
    assert.match(explained, /dist\/esm\/index\.d\.ts/);
    assert.match(explained, /dist\/cjs\/index\.d\.ts/);
  });
});
