#!/usr/bin/env node
// ts-client.mjs — the TypeScript side of the mcp-call-vs-ts benchmark.
//
// Spawns a stdio MCP server with the official TypeScript SDK (@modelcontextprotocol/sdk, the version pinned in
// tools/npm), connects, then calls one tool N times in a row and prints one JSON line:
//
//   {"client":"ts-sdk","calls":N,"us_per_call":X,"connect_ms":Y,"cold_ms":Z}
//
// us_per_call is the mean wall time of one tools/call round trip over the N timed calls (after the warm-up);
// connect_ms is spawn + initialize (what `Client.connect` costs); cold_ms adds the first call (--first-tool, e.g.
// browser_navigate, or the timed tool).
//
// Usage:
//   node bench/mcp-call-vs-ts/ts-client.mjs [-n 2000] [--warmup 100] [--tool echo] [--args '{"text":"hi"}']
//        [--first-tool NAME --first-args JSON] -- CMD [ARG...]
//
// The server inherits this process's whole environment (so FAKE_MCP_MODE=raw-echo reaches the fake server).
// Requires `npm ci` in tools/npm (make test and make bench do it).

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { performance } from "node:perf_hooks";

const here = path.dirname(fileURLToPath(import.meta.url));
const npmDir = path.resolve(here, "../../tools/npm");
const require = createRequire(path.join(npmDir, "package.json"));

function usage(msg) {
  if (msg) console.error(`ts-client: ${msg}`);
  console.error(
    "usage: node ts-client.mjs [-n N] [--warmup W] [--tool NAME] [--args JSON] -- CMD [ARG...]",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { n: 2000, warmup: 100, tool: "echo", args: { text: "hi" }, firstTool: "", firstArgs: {}, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case "--":
        opts.command = argv.slice(i + 1);
        i = argv.length;
        break;
      case "-n":
      case "--n":
        opts.n = Number.parseInt(next(), 10);
        break;
      case "--warmup":
        opts.warmup = Number.parseInt(next(), 10);
        break;
      case "--tool":
        opts.tool = next();
        break;
      case "--args":
        try {
          opts.args = JSON.parse(next());
        } catch (err) {
          usage(`--args is not JSON: ${err.message}`);
        }
        break;
      case "--first-tool":
        opts.firstTool = next();
        break;
      case "--first-args":
        try {
          opts.firstArgs = JSON.parse(next());
        } catch (err) {
          usage(`--first-args is not JSON: ${err.message}`);
        }
        break;
      case "-h":
      case "--help":
        usage();
        break;
      default:
        usage(`unknown argument ${a}`);
    }
  }
  if (!Number.isInteger(opts.n) || opts.n < 1) usage("-n must be a positive integer");
  if (!Number.isInteger(opts.warmup) || opts.warmup < 0) usage("--warmup must be >= 0");
  if (opts.command.length === 0) usage("no server command after --");
  return opts;
}

function loadSdk() {
  try {
    const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
    return { Client, StdioClientTransport };
  } catch (err) {
    console.error(`ts-client: cannot load @modelcontextprotocol/sdk from ${npmDir}: ${err.message}`);
    console.error("ts-client: run `npm ci` in tools/npm (or `make test`) first");
    process.exit(1);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const { Client, StdioClientTransport } = loadSdk();

  const [command, ...args] = opts.command;
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env },
    stderr: "pipe", // kept and shown only if something fails
  });
  const stderrTail = [];
  transport.stderr?.on("data", (chunk) => {
    stderrTail.push(...chunk.toString().split("\n").filter(Boolean));
    if (stderrTail.length > 20) stderrTail.splice(0, stderrTail.length - 20);
  });

  const client = new Client({ name: "volcanicbot-bench-ts", version: "0.0.0" });

  const fail = (msg) => {
    console.error(`ts-client: ${msg}`);
    if (stderrTail.length) console.error(`ts-client: server stderr:\n  ${stderrTail.join("\n  ")}`);
    process.exitCode = 1;
  };

  const call = async (name = opts.tool, args = opts.args) => {
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) {
      const text = (res.content ?? []).map((c) => c.text ?? `[${c.type}]`).join(" ");
      throw new Error(`tool ${name} returned isError: ${text}`);
    }
    return res;
  };

  try {
    const t0 = performance.now();
    await client.connect(transport);
    const connectMs = performance.now() - t0;
    // The cold start: spawn, handshake and the first call (--first-tool, or
    // the timed tool).
    await call(opts.firstTool || opts.tool, opts.firstTool ? opts.firstArgs : opts.args);
    const coldMs = performance.now() - t0;

    for (let i = 0; i < opts.warmup; i++) await call();

    const t1 = performance.now();
    for (let i = 0; i < opts.n; i++) await call();
    const elapsedMs = performance.now() - t1;

    const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;
    console.log(
      JSON.stringify({
        client: "ts-sdk",
        calls: opts.n,
        us_per_call: round((elapsedMs * 1000) / opts.n, 1),
        connect_ms: round(connectMs, 1),
        cold_ms: round(coldMs, 1),
      }),
    );
  } catch (err) {
    fail(err?.message ?? String(err));
  } finally {
    await client.close().catch(() => {});
  }
}

await main();
