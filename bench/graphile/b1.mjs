// pcbench's Graphile Worker peer for B1 (run by pcbench as a subprocess; see bench/cmd/pcbench/graphile.go).
//
//   node b1.mjs --conn URL --n N --lanes L --enqueuers E --bulk B --workers W --concurrency C --poll MS --mode default|batched
//
// The same workload as B1: N no-op jobs, job i in the named queue "q<i mod L>" (a named queue runs one job at a time,
// in order: Graphile Worker's counterpart of a lane). E concurrent enqueuers in this process call addJob (one job per
// statement/transaction) or, with B > 0, addJobs with B jobs per call (batch b = jobs b·B … (b+1)·B−1, enqueuer g
// takes every E-th batch, as B1 does). W worker processes (this script re-run with --worker) each run Graphile
// Worker with concurrency C and poll interval MS. "default" leaves every other setting at Graphile Worker's default;
// "batched" adds its performance guide's batching: localQueue {size: 500}, completeJobBatchDelay 0,
// failJobBatchDelay 0.
//
// Completion: the run ends when every job has executed and the jobs table is empty (Graphile Worker deletes a job
// when its completion is written, so batched completions are counted only once written).
//
// Order check (no extra database writes): every enqueue call's interval [start, end] and every job's execution
// interval are taken on the machine's monotonic clock (process.hrtime, CLOCK_MONOTONIC, shared by all processes).
// Per queue, executions must not overlap, and if job x's enqueue returned before job y's enqueue started, x must
// have run before y. Every job must run exactly once.
//
// Prints one JSON object on stdout.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker";

const { values: a } = parseArgs({
  options: {
    conn: { type: "string" },
    schema: { type: "string", default: "graphile_worker" },
    n: { type: "string", default: "2000" },
    lanes: { type: "string", default: "1000" },
    enqueuers: { type: "string", default: "8" },
    bulk: { type: "string", default: "0" },
    workers: { type: "string", default: "2" },
    concurrency: { type: "string", default: "8" },
    poll: { type: "string", default: "20" },
    mode: { type: "string", default: "default" },
    worker: { type: "boolean", default: false },
  },
});
const num = (k) => Number.parseInt(a[k], 10);
const now = () => Number(process.hrtime.bigint()); // ns, CLOCK_MONOTONIC
// Errors only (a log line per job would cost the peer time).
const logFactory = () => (level, message) => {
  if (level === "error") process.stderr.write(`graphile: ${message}\n`);
};
const logger = new Logger(logFactory);

function workerOptions() {
  const o = {
    connectionString: a.conn,
    schema: a.schema,
    concurrency: num("concurrency"),
    pollInterval: num("poll"),
    noHandleSignals: true,
    logger,
  };
  if (a.mode === "batched") {
    o.preset = { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } };
  } else if (a.mode !== "default") {
    throw new Error(`unknown --mode ${a.mode}`);
  }
  return o;
}

async function workerMain() {
  // Executions: flat [i, start, end, …]; the count goes to the parent every 10 ms.
  const rec = [];
  let executed = 0;
  const runner = await run(workerOptions(), {
    noop: async (payload) => {
      const s = now();
      await Promise.resolve();
      rec.push(payload.i, s, now());
      executed++;
    },
  });
  const tick = setInterval(() => process.send({ executed }), 10);
  process.on("message", async (m) => {
    if (m.stop) {
      clearInterval(tick);
      await runner.stop();
      process.send({ executed, rec }, () => process.exit(0));
    }
  });
  process.send({ ready: true });
}

async function main() {
  const n = num("n"), lanes = num("lanes"), enq = num("enqueuers"), bulk = num("bulk"), W = num("workers");
  await runMigrations({ connectionString: a.conn, schema: a.schema, logger });
  const utils = await makeWorkerUtils({ connectionString: a.conn, schema: a.schema, maxPoolSize: enq + 2, logger });
  const counts = new Array(W).fill(0);
  const results = new Array(W);
  const self = fileURLToPath(import.meta.url);
  const children = [];
  await Promise.all(
    Array.from({ length: W }, (_, w) =>
      new Promise((resolve, reject) => {
        const c = fork(self, [...process.argv.slice(2), "--worker"], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
        children.push(c);
        c.on("message", (m) => {
          if (m.ready) resolve();
          if (m.executed !== undefined) counts[w] = m.executed;
          if (m.rec) results[w] = m.rec;
        });
        c.on("exit", (code) => code && reject(new Error(`worker ${w} exited ${code}`)));
      }),
    ),
  );
  await new Promise((r) => setTimeout(r, 100)); // the workers' first (empty) fetch

  const enqStart = new Float64Array(n), enqEnd = new Float64Array(n);
  const spec = (i) => ({ identifier: "noop", payload: { i }, queueName: `q${i % lanes}` });
  const t0 = now();
  await Promise.all(
    Array.from({ length: enq }, async (_, g) => {
      if (bulk > 0) {
        for (let first = g * bulk; first < n; first += enq * bulk) {
          const last = Math.min(first + bulk, n);
          const specs = [];
          for (let i = first; i < last; i++) specs.push(spec(i));
          const s = now();
          await utils.addJobs(specs);
          const e = now();
          enqStart.fill(s, first, last);
          enqEnd.fill(e, first, last);
        }
        return;
      }
      for (let i = g; i < n; i += enq) {
        const { identifier, payload, queueName } = spec(i);
        enqStart[i] = now();
        await utils.addJob(identifier, payload, { queueName });
        enqEnd[i] = now();
      }
    }),
  );
  const t1 = now();
  // Every job executed, then every completion written (the jobs table is empty).
  while (counts.reduce((x, y) => x + y, 0) < n) await new Promise((r) => setTimeout(r, 5));
  for (;;) {
    const left = await utils.withPgClient(async (c) =>
      Number((await c.query(`select count(*) as n from "${a.schema}"._private_jobs`)).rows[0].n),
    );
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const t2 = now();

  for (const c of children) c.send({ stop: true });
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.on("exit", r)))));
  await utils.release();

  // Order check.
  const seen = new Uint8Array(n);
  const byQueue = new Map();
  let duplicates = 0;
  for (const rec of results) {
    for (let k = 0; k < rec.length; k += 3) {
      const i = rec[k];
      if (seen[i]++) duplicates++;
      const q = i % lanes;
      if (!byQueue.has(q)) byQueue.set(q, []);
      byQueue.get(q).push({ i, s: rec[k + 1], e: rec[k + 2] });
    }
  }
  let missing = 0;
  for (let i = 0; i < n; i++) if (!seen[i]) missing++;
  let overlaps = 0, inversions = 0, pairs = 0;
  for (const runs of byQueue.values()) {
    runs.sort((x, y) => x.s - y.s);
    for (let k = 1; k < runs.length; k++) if (runs[k].s < runs[k - 1].e) overlaps++;
    for (let x = 0; x < runs.length; x++) {
      for (let y = x + 1; y < runs.length; y++) {
        // runs[x] ran before runs[y]: wrong if runs[y]'s enqueue returned before runs[x]'s began.
        if (enqEnd[runs[y].i] < enqStart[runs[x].i]) inversions++;
        if (enqEnd[runs[x].i] < enqStart[runs[y].i]) pairs++;
      }
    }
  }
  const out = {
    n, lanes, bulk, enqueuers: enq, workers: W, concurrency: num("concurrency"), poll_ms: num("poll"), mode: a.mode,
    settings: workerOptions().preset?.worker ?? {},
    total_s: (t2 - t0) / 1e9, enqueue_s: (t1 - t0) / 1e9, per_second: n / ((t2 - t0) / 1e9),
    duplicates, missing, overlaps, inversions, ordered_pairs_checked: pairs,
    order_ok: duplicates === 0 && missing === 0 && overlaps === 0 && inversions === 0,
  };
  process.stdout.write(JSON.stringify(out) + "\n");
}

(a.worker ? workerMain() : main()).catch((e) => {
  process.stderr.write(`graphile b1: ${e?.stack ?? e}\n`);
  process.exit(1);
});
