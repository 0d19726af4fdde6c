// HTTPS with a private certificate authority (ClientOptions.caFile). Node.js only: global fetch cannot be given a
// CA without undici's Agent, which would be a runtime dependency, so requests to an https:// URL go through
// node:https with an agent that trusts the CA file's certificates (TLS 1.2 or newer, host names checked). Node's
// modules are imported lazily by name, so the package still compiles without Node's types and loads elsewhere.

// The few shapes of node:https used here.
interface IncomingMessage {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
  on(event: "data", listener: (chunk: Uint8Array) => void): this;
  on(event: "end", listener: () => void): this;
  on(event: "error", listener: (err: Error) => void): this;
}

interface ClientRequest {
  on(event: "error", listener: (err: Error) => void): this;
  end(body?: string | Uint8Array): void;
}

interface HttpsModule {
  Agent: new (options: { ca: string; keepAlive: boolean; minVersion: string }) => unknown;
  request(url: URL, options: { method: string; headers: Record<string, string>; agent: unknown; signal?: AbortSignal },
    callback: (res: IncomingMessage) => void): ClientRequest;
}

interface FsPromises {
  readFile(path: string, encoding: "utf8"): Promise<string>;
}

const load = (name: string): Promise<unknown> => import(name);

/**
 * A fetch that trusts only the PEM certificates in caFile for https:// URLs (other URLs use globalThis.fetch). The
 * file is read at the first request; an unreadable file fails that request (ConnectionError from the client).
 */
export function caFileFetch(caFile: string): typeof fetch {
  let ready: Promise<{ https: HttpsModule; agent: unknown }> | undefined;
  const setup = async () => {
    const fs = (await load("node:fs/promises")) as FsPromises;
    const https = (await load("node:https")) as HttpsModule;
    const ca = await fs.readFile(caFile, "utf8");
    return { https, agent: new https.Agent({ ca, keepAlive: true, minVersion: "TLSv1.2" }) };
  };
  const caFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.protocol !== "https:") return globalThis.fetch(input, init);
    ready ??= setup();
    let loaded: { https: HttpsModule; agent: unknown };
    try {
      loaded = await ready;
    } catch (err) {
      ready = undefined; // try the file again at the next request
      throw new TypeError("caFile: cannot read the CA file", { cause: err });
    }
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => { headers[k] = v; });
    // A body other than text (importScope's bytes, Blob or stream) is read whole first.
    const raw = init?.body;
    const body = raw === undefined || raw === null ? undefined
      : typeof raw === "string" ? raw : new Uint8Array(await new Response(raw).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const options: { method: string; headers: Record<string, string>; agent: unknown; signal?: AbortSignal } =
        { method: init?.method ?? "GET", headers, agent: loaded.agent };
      if (init?.signal) options.signal = init.signal;
      const req = loaded.https.request(url, options, (res) => {
        const chunks: Uint8Array[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) v.forEach((x) => h.append(k, x));
            else if (v !== undefined) h.set(k, v);
          }
          const size = chunks.reduce((n, c) => n + c.length, 0);
          const all = new Uint8Array(size);
          let at = 0;
          for (const c of chunks) {
            all.set(c, at);
            at += c.length;
          }
          const status = res.statusCode ?? 502;
          resolve(new Response(size > 0 && status !== 204 && status !== 304 ? all : null, { status, headers: h }));
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  };
  return caFetch as typeof fetch;
}
