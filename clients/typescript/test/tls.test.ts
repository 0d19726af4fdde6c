// The TypeScript client against a real powercontext server serving HTTPS with a private CA (caFile). The
// certificates are made with the openssl command (the suite is skipped without it).
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import { APIError, Client, ConnectionError } from "../src/index.js";
import { caFileFetch } from "../src/tls.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

function haveOpenSSL(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function makeCerts(dir: string): { ca: string; cert: string; key: string } {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=pc test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  run("req", ...ec, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n" +
    "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectKeyIdentifier=hash\n" +
    "authorityKeyIdentifier=keyid\n");
  run("x509", "-req", "-in", "tls.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "tls.crt",
    "-days", "1", "-extfile", "ext.cnf");
  return { ca: join(dir, "ca.pem"), cert: join(dir, "tls.crt"), key: join(dir, "tls.key") };
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => (addr && typeof addr === "object" ? ok(addr.port) : fail(new Error("no port"))));
    });
  });
}

const skip = haveOpenSSL() ? false : "openssl not found";

describe("powercontext client against an HTTPS server (caFile)", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "pc-ts-tls-"));
  const token = randomBytes(24).toString("base64url");
  let certs: { ca: string; cert: string; key: string };
  let port = 0;
  let proc: ChildProcess | undefined;

  before(async () => {
    certs = makeCerts(dir);
    let bin = process.env["POWERCONTEXT_BIN"];
    if (!bin) {
      bin = join(dir, "powercontext");
      execFileSync("go", ["build", "-o", bin, "./cmd/powercontext"], { cwd: repoRoot, stdio: "inherit" });
    }
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("POWERCONTEXT_")) env[k] = v;
    port = await freePort();
    proc = spawn(bin, ["server", "run", "--database-url", `sqlite://${dir}/pc.db`, "--listen", `127.0.0.1:${port}`,
      "--auth-token", token, "--tls-cert-file", certs.cert, "--tls-key-file", certs.key], { env, stdio: "ignore" });
    const probe = caFileFetch(certs.ca);
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const r = await probe(`https://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) break;
      } catch {
        // not listening yet
      }
      assert.ok(Date.now() < deadline && proc.exitCode === null, "the TLS server did not become ready");
      await new Promise((ok) => setTimeout(ok, 100));
    }
  });

  after(async () => {
    if (proc && proc.exitCode === null) {
      const exited = new Promise((ok) => proc?.once("exit", ok));
      proc.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("HTTPS works with caFile", async () => {
    const pc = new Client(`https://127.0.0.1:${port}`, { token, caFile: certs.ca });
    await pc.captureSource({ scope_id: "ts-tls", content: "captured over TLS", source_id: "tls-1" });
    const page = await pc.listSources("ts-tls");
    assert.deepEqual(page.items.map((s) => s.content), ["captured over TLS"]);
  });

  test("export and import go over caFile too", async () => {
    const pc = new Client(`https://127.0.0.1:${port}`, { token, caFile: certs.ca });
    await pc.captureSource({ scope_id: "ts-tls-x", content: "exported over TLS" });
    const chunks: Uint8Array[] = [];
    const n = await pc.exportScope("ts-tls-x", { write: (c: Uint8Array) => chunks.push(c) });
    const stream = Buffer.concat(chunks);
    assert.equal(n, stream.length);
    const imported = await pc.importScope("ts-tls-y", new Blob([new Uint8Array(stream)]).stream());
    assert.deepEqual([imported.source_scope_id, imported.counts.sources], ["ts-tls-x", 1]);
    assert.deepEqual((await pc.listSources("ts-tls-y")).items.map((s) => s.content), ["exported over TLS"]);
  });

  test("without caFile the certificate is not trusted", async () => {
    const pc = new Client(`https://127.0.0.1:${port}`, { token });
    await assert.rejects(pc.listSources("ts-tls"), ConnectionError);
  });

  test("cleartext on the TLS port gets 400", async () => {
    const pc = new Client(`http://127.0.0.1:${port}`, { token });
    await assert.rejects(pc.listSources("ts-tls"), (err: unknown) => err instanceof APIError && err.status === 400);
  });

  test("an unreadable caFile fails the request", async () => {
    const pc = new Client(`https://127.0.0.1:${port}`, { token, caFile: join(dir, "missing.pem") });
    await assert.rejects(pc.listSources("ts-tls"), ConnectionError);
  });
});
