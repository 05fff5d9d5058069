#!/usr/bin/env node
// Builds schedhostd's web pages: `node ui/build.mjs --outdir DIR` type-checks ui/src with tsc,
// then writes DIR/index.html, DIR/app.js and DIR/app.css (minified, ES2020, self-contained).
// Paths resolve from this file, so it runs from any directory. Needs `npm ci` in ui/ first.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ui = dirname(fileURLToPath(import.meta.url));

function fail(message) {
  console.error(`build.mjs: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  let outdir;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--outdir" && i + 1 < argv.length) outdir = argv[++i];
    else if (argv[i].startsWith("--outdir=")) outdir = argv[i].slice("--outdir=".length);
    else fail(`unknown argument "${argv[i]}"; usage: node build.mjs --outdir DIR`);
  }
  if (!outdir) fail("usage: node build.mjs --outdir DIR");
  return resolve(outdir);
}

const outdir = parseArgs(process.argv.slice(2));

const tsc = join(ui, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc) || !existsSync(join(ui, "node_modules", "esbuild"))) {
  fail(`${join(ui, "node_modules")} lacks typescript or esbuild: run \`npm ci\` in ${ui}`);
}

// tsc checks the types only; esbuild, which ignores them, does the bundling.
const check = spawnSync(process.execPath, [tsc, "--noEmit", "-p", join(ui, "tsconfig.json")],
  { cwd: ui, encoding: "utf8" });
if (check.error) fail(`running tsc: ${check.error.message}`);
if (check.status !== 0) {
  process.stderr.write(check.stdout + check.stderr);
  fail(`type check failed (tsc exited with ${check.status ?? check.signal})`);
}

const { build } = await import("esbuild");
let result;
try {
  result = await build({
    absWorkingDir: ui,
    entryPoints: [
      { in: "src/main.tsx", out: "app" },
      { in: "src/app.css", out: "app" },
    ],
    outdir,
    bundle: true,
    minify: true,
    format: "iife",
    target: "es2020",
    jsx: "automatic",
    jsxImportSource: "preact",
    sourcemap: false,
    legalComments: "none",
    write: false,
    logLevel: "silent",
  });
} catch (e) {
  // esbuild's error already lists each problem with its file and line.
  fail(`esbuild failed:\n${e.message}`);
}

const files = new Map(result.outputFiles.map((f) => [f.path, f.text]));
const js = files.get(join(outdir, "app.js"));
const css = files.get(join(outdir, "app.css"));
if (js === undefined || css === undefined || files.size !== 2) {
  fail(`esbuild wrote ${[...files.keys()].join(", ")}, not exactly app.js and app.css`);
}
mkdirSync(outdir, { recursive: true });
writeFileSync(join(outdir, "index.html"), readFileSync(join(ui, "src", "index.html")));
writeFileSync(join(outdir, "app.js"), js);
writeFileSync(join(outdir, "app.css"), css);
console.log(`build.mjs: wrote index.html, app.js (${js.length} B), app.css (${css.length} B) ` +
  `to ${outdir}`);
