// Starts a real powercontext server for the tests: the binary ($POWERCONTEXT_BIN, or built here with go build) in
// single_node mode on an embedded SQLite database in a temporary directory, on a free loopback port, with an auth
// token. Nothing is mocked.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// build-test/test/server.js → the repository root is four levels up.
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

function binary(): string {
  const fromEnv = process.env["POWERCONTEXT_BIN"];
  if (fromEnv) return fromEnv;
  const out = join(mkdtempSync(join(tmpdir(), "pc-bin-")), "powercontext");
  execFileSync("go", ["build", "-o", out, "./cmd/powercontext"], { cwd: repoRoot, stdio: "inherit" });
  return out;
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

export class Server {
  readonly dir = mkdtempSync(join(tmpdir(), "pc-ts-test-"));
  readonly token = randomBytes(24).toString("base64url");
  url = "";
  #proc: ChildProcess | undefined;
  #exited = false;
  readonly #log = join(this.dir, "server.log");

  async start(timeoutMs = 60_000): Promise<this> {
    const bin = binary();
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("POWERCONTEXT_")) env[k] = v;
    for (let attempt = 0; attempt < 3; attempt++) { // a port picked free can be taken before the server binds it
      const port = await freePort();
      this.url = `http://127.0.0.1:${port}`;
      const fd = openSync(this.#log, "a");
      this.#exited = false;
      this.#proc = spawn(bin, ["server", "run", "--database-url", `sqlite://${this.dir}/pc.db`,
        "--listen", `127.0.0.1:${port}`, "--auth-token", this.token], { env, stdio: ["ignore", fd, fd] });
      closeSync(fd);
      this.#proc.once("exit", () => { this.#exited = true; });
      if (await this.#waitReady(timeoutMs)) return this;
      if (!this.#exited) break;
    }
    await this.stop();
    throw new Error("powercontext did not become ready; server log:\n" + this.logTail());
  }

  async #waitReady(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.#exited) return false;
      try {
        const r = await fetch(this.url + "/health/ready", { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) return true;
      } catch {
        // not listening yet
      }
      await new Promise((ok) => setTimeout(ok, 100));
    }
    return false;
  }

  logTail(lines = 40): string {
    try {
      return readFileSync(this.#log, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }

  async stop(): Promise<void> {
    const p = this.#proc;
    if (p && !this.#exited) {
      const exited = new Promise<void>((ok) => p.once("exit", () => ok()));
      p.kill("SIGTERM");
      const timer = setTimeout(() => p.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
