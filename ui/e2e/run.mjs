#!/usr/bin/env node
// End-to-end test of the web pages against a real schedhostd:
//
//   node ui/e2e/run.mjs --bin DIR --plugins DIR --ui DIR --out DIR --repo DIR [--report FILE]
//       [--compare-report FILE]
//
// --bin holds schedhostd and schedctl, --plugins the builtin plugin libraries, --ui the pages
// build.mjs wrote, --out receives the screenshots, --repo is the repository root; --report is an
// HTML report of `schedctl simulate --html`, --compare-report one of `simulate --compare --html`
// (its Compare page is checked: the pods that differ, one opened on both explanations). It
// starts a daemon on a temporary config, applies config/examples/demo-cluster.yaml and drives
// Debian's chromium through the pages, comparing what they show with what the API answers. One
// line per step, "ok: ..." or "FAIL: ..."; exits 0 only when every step passed.

import { execFile, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync,
  writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const run = promisify(execFile);
const REJECTIONS = ["Unschedulable", "UnschedulableAndUnresolvable"];

function parseArgs(argv) {
  const known = ["bin", "plugins", "ui", "out", "repo", "report", "compare-report"];
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]?.replace(/^--/, "");
    if (!known.includes(key) || i + 1 >= argv.length) usage(`bad argument "${argv[i]}"`);
    args[key] = resolve(argv[i + 1]);
  }
  for (const k of known.slice(0, 5)) if (!args[k]) usage(`--${k} is required`);
  const needed = [join(args.bin, "schedhostd"), join(args.bin, "schedctl"),
    join(args.ui, "index.html"), join(args.ui, "app.js"),
    join(args.repo, "config/examples/demo-cluster.yaml"), ...(args.report ? [args.report] : []),
    ...(args["compare-report"] ? [args["compare-report"]] : [])];
  for (const f of needed) if (!existsSync(f)) usage(`${f} does not exist`);
  return args;
}

function usage(why) {
  console.error(`run.mjs: ${why}\nusage: node ui/e2e/run.mjs --bin DIR --plugins DIR --ui DIR ` +
    "--out DIR --repo DIR [--report FILE] [--compare-report FILE]");
  process.exit(2);
}

// Check is a failed expectation: the step stops and prints the message.
class Check extends Error {}

function expect(cond, message) {
  if (!cond) throw new Check(message);
}

// waitFor retries `probe` until it returns something truthy, or fails with its last word.
async function waitFor(what, probe, timeoutMs = 10000, everyMs = 200) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
      last = "not yet";
    } catch (e) {
      last = e.message;
    }
    if (Date.now() > end) throw new Check(`timed out after ${timeoutMs} ms waiting for ${what} (${last})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}


const CHROMIUM = "/usr/bin/chromium";

async function main() {
  const args = parseArgs(process.argv.slice(2));
  // 77 is CTest's "skipped" (SKIP_RETURN_CODE); scripts/test.sh insists on the browser.
  if (!existsSync(CHROMIUM)) {
    const required = process.env.SCHEDHOST_REQUIRE_BROWSER === "1";
    console.log(`${required ? "FAIL" : "skip"}: no ${CHROMIUM} (apt-get install chromium)`);
    process.exit(required ? 1 : 77);
  }
  const started = Date.now();
  mkdirSync(args.out, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), "schedhost-e2e-"));
  // The daemon's log stays beside the screenshots, for a failure to be read after the run.
  const log = join(args.out, "schedhostd.log");
  rmSync(log, { force: true });
  const [metricsPort, uiPort] = [await freePort(), await freePort()];
  const sock = `unix://${tmp}/s.sock`;
  const config = join(tmp, "schedhost.toml");
  writeFileSync(config, [
    "[host]",
    `state_dir = "${tmp}/state"`,
    "[api]",
    `listen = "${sock}"`,
    "[metrics]",
    `listen = "127.0.0.1:${metricsPort}"`,
    "[ui]",
    `listen = "127.0.0.1:${uiPort}"`,
    // Every pod compared, by a shadow that packs nodes instead of spreading: it disagrees on
    // most placements. It comes first, so that step 6's appended table lands in the live one.
    "[shadow]",
    "every_pod = true",
    "[[profile]]",
    'name = "default-next"',
    'shadow_of = "default-scheduler"',
    "[profile.plugin_config.NodeResourcesFit.scoring_strategy]",
    'type = "MostAllocated"',
    "[[profile]]",
    'name = "default-scheduler"',
    "",
  ].join("\n"));

  let daemon;
  let daemonExit;
  let browser;
  let failures = 0;
  const api = async (path) => {
    const res = await fetch(`http://127.0.0.1:${uiPort}/api/v1/${path}`);
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const schedctl = (...a) => run(join(args.bin, "schedctl"), ["--server", sock, ...a],
    { timeout: 15000 });

  // step runs one numbered step; a failure is printed and the later steps that need the page
  // still run where they can.
  const step = async (name, body) => {
    try {
      const detail = await body();
      console.log(`ok: ${name}${detail ? ` (${detail})` : ""}`);
      return true;
    } catch (e) {
      failures++;
      console.log(`FAIL: ${name}: ${e instanceof Check ? e.message : e.stack}`);
      return false;
    }
  };

  try {
    const up = await step("1 start schedhostd, apply demo-cluster.yaml, queue settled",
      async () => {
        daemon = spawn(join(args.bin, "schedhostd"), ["--config", config, "--plugin-dir",
          args.plugins], { stdio: ["ignore", "pipe", "pipe"] });
        daemon.stdout.on("data", (d) => appendFileSync(log, d));
        daemon.stderr.on("data", (d) => appendFileSync(log, d));
        daemonExit = new Promise((ok) => daemon.once("exit", (code, sig) => ok(code ?? sig)));
        daemon.once("error", (e) => {
          appendFileSync(log, `spawning schedhostd: ${e.message}\n`);
          daemon.exited = true;
        });
        daemonExit.then(() => (daemon.exited = true));
        await waitFor("/api/v1/stats", async () => {
          if (daemon.exited) {
            throw new Check(`schedhostd exited: ${readFileSync(log, "utf8").slice(-2000)}`);
          }
          return (await api("stats")) !== undefined;
        }, 15000, 100);
        await schedctl("apply", "-f", join(args.repo, "config/examples/demo-cluster.yaml"));
        // Settled: nothing waits to be tried or is being tried, twice in a row.
        let quiet = 0;
        const s = await waitFor("the queue to settle", async () => {
          const st = await api("stats");
          const busy = Number(st.active_pods) + Number(st.in_flight_pods) + Number(st.backoff_pods);
          const tried = Number(st.attempts_scheduled) + Number(st.attempts_unschedulable);
          quiet = busy === 0 && tried > 0 ? quiet + 1 : 0;
          return quiet >= 2 && st;
        }, 20000, 150);
        return `${s.bound_pods} bound, ${s.unschedulable_pods} unschedulable, ` +
          `${s.gated_pods} gated`;
      });
    if (!up) return;

    // The pages under test are those of --ui, and schedhostd must serve them itself (it finds
    // them beside its binary): the browser talks to nothing but the daemon.
    const base = `http://127.0.0.1:${uiPort}/`;
    const served = await step("2 schedhostd serves the pages of --ui", async () => {
      for (const file of ["index.html", "app.js", "app.css"]) {
        const res = await fetch(`${base}${file === "index.html" ? "" : file}`);
        const body = await res.text();
        if (!res.ok || body !== readFileSync(join(args.ui, file), "utf8")) {
          throw new Check(`/${file === "index.html" ? "" : file}: HTTP ${res.status}, ` +
            `not the bytes of ${join(args.ui, file)}: ${body.slice(0, 300)}`);
        }
      }
    });
    if (!served) return;

    const userData = mkdtempSync(join(tmp, "chromium-"));
    browser = await chromium.launchPersistentContext(userData, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const page = browser.pages()[0] ?? await browser.newPage();
    // Everything here shows within a poll or two; a broken page should fail fast, not in 30 s.
    page.setDefaultTimeout(5000);
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    const shot = (name) => page.screenshot({ path: join(args.out, name), fullPage: true });
    const texts = (sel, attr) => page.locator(sel).evaluateAll((els, a) =>
      els.map((e) => (a ? e.getAttribute(a) : e.textContent.trim())), attr);

    await step("3 overview: node count, node rows, pods and phases as /api/v1/pods", async () => {
      await page.goto(base);
      await waitFor("node-count 6", async () =>
        (await page.getByTestId("node-count").textContent()) === "6");
      const rows = await page.getByTestId("node-row").count();
      expect(rows === 6, `${rows} node-row elements, expected 6`);
      // The tables poll every 2 s; compare until page and API agree (they settle within a poll).
      let diff = "";
      await waitFor("the pods table to match /api/v1/pods", async () => {
        const want = await api("pods?limit=100");
        const shown = await texts("[data-testid=pod-row]", "data-pod");
        const wantPods = want.pods.map((p) => `${p.namespace}/${p.name}`);
        diff = JSON.stringify(shown) === JSON.stringify(wantPods) ? "" :
          `rows ${JSON.stringify(shown)} vs API ${JSON.stringify(wantPods)}`;
        for (const [phase, n] of Object.entries(want.phases)) {
          const tile = page.getByTestId(`phase-${phase}`);
          const got = (await tile.count()) ? await tile.textContent() : "(none)";
          if (got !== String(n)) diff += ` phase ${phase}: page ${got}, API ${n}`;
        }
        if (diff) throw new Error(diff);
        return true;
      }, 6000);
      const links = await page.locator("[data-testid=pod-row] a[href^='#/pod/']").count();
      expect(links === (await page.getByTestId("pod-row").count()), "a pod-row lacks its link");
      await shot("overview.png");
      return `6 nodes, ${links} pods`;
    });

    await step("4 queue → pod page: FitError message and a rejecting cell", async () => {
      const queue = await api("queue?limit=1000");
      // A pending pod rejected by a Filter plugin, whose explanation has the rejecting cell.
      let pick;
      for (const q of queue.pods.filter((p) => p.rejected_by.length > 0)) {
        const e = await api(`explain?namespace=${encodeURIComponent(q.namespace)}&name=` +
          `${encodeURIComponent(q.name)}&limit=50`);
        const cell = e.explanation.nodes.flatMap((n) => n.plugins).find((v) =>
          q.rejected_by.includes(v.plugin) && REJECTIONS.includes(v.filter_code));
        if (cell) {
          pick = { q, e, cell };
          break;
        }
      }
      expect(pick, `no pending pod with rejected_by has a rejecting Filter cell from one of ` +
        `those plugins: ${JSON.stringify(queue.pods.map((p) => [p.name, p.rejected_by]))}`);
      const key = `${pick.q.namespace}/${pick.q.name}`;
      await page.getByTestId("nav-queue").click();
      const row = page.locator(`[data-testid=queue-row][data-pod="${key}"]`);
      await row.waitFor({ timeout: 5000 });
      const rows = await page.getByTestId("queue-row").count();
      expect(rows === Math.min(100, queue.pods_total),
        `${rows} queue rows, API has ${queue.pods_total} pending pods`);
      await shot("queue.png");
      await row.locator("a").click();
      const message = page.getByTestId("explain-message");
      await message.waitFor({ timeout: 5000 });
      const shown = (await message.textContent()) ?? "";
      expect(shown === pick.e.explanation.message,
        `explain-message "${shown}" differs from the API's "${pick.e.explanation.message}"`);
      await page.getByTestId("explain-grid").waitFor();
      const sel = `[data-testid=grid-cell][data-plugin="${pick.cell.plugin}"]` +
        `[data-code="${pick.cell.filter_code}"]`;
      const n = await page.locator(sel).count();
      expect(n > 0, `no ${sel} in the grid`);
      // Every verdict of the page as the API gives it, cell by cell.
      for (const node of pick.e.explanation.nodes) {
        const codes = await page.locator(`[data-testid=grid-row][data-node="${node.node}"] ` +
          "[data-testid=grid-cell]").evaluateAll((els) =>
          els.map((e) => [e.dataset.plugin, e.dataset.code]));
        const want = node.plugins.map((v) => [v.plugin, v.filter_code]);
        expect(JSON.stringify(codes) === JSON.stringify(want),
          `node ${node.node}: cells ${JSON.stringify(codes)}, API ${JSON.stringify(want)}`);
      }
      await shot("pod.png");
      return `${key}: ${n} × ${pick.cell.plugin} ${pick.cell.filter_code}`;
    });

    await step("5 shadow page: the disagreements as /api/v1/shadows lists them; one opens " +
      "both grids", async () => {
      const want = await waitFor("a disagreement of default-next", async () => {
        const s = (await api("shadows")).shadows.find((x) => x.profile === "default-next");
        return s && s.recent.length > 0 && s;
      });
      await page.getByTestId("nav-shadow").click();
      const row = page.getByTestId("shadow-row");
      await row.first().waitFor();
      expect((await row.first().getAttribute("data-profile")) === "default-next",
        `shadow-row is ${await row.first().getAttribute("data-profile")}`);
      // The list is the API's, newest first (a retried pending pod may add one between reads).
      let shown = [];
      await waitFor("the disagreement rows to match /api/v1/shadows", async () => {
        const api_uids = (await api("shadows")).shadows[0].recent.map((d) => d.uid);
        shown = await texts("[data-testid=shadow-disagreement]", "data-uid");
        if (JSON.stringify(shown) !== JSON.stringify(api_uids)) {
          throw new Error(`rows ${JSON.stringify(shown)} vs API ${JSON.stringify(api_uids)}`);
        }
        return true;
      }, 6000);
      await shot("shadow.png");
      const uid = shown[0];
      await page.locator(`[data-testid=shadow-disagreement][data-uid="${uid}"] a`).first().click();
      const pair = (await api(`shadows?profile=default-next&uid=${encodeURIComponent(uid)}`))
        .shadows[0].recent.find((d) => d.uid === uid);
      expect(pair && pair.live_nodes.length > 0 && pair.shadow_nodes.length > 0,
        `the API gives no cycles for ${uid}: ${JSON.stringify(pair)}`);
      await page.getByTestId("pair-live").locator("[data-testid=explain-grid]").waitFor();
      await page.getByTestId("pair-shadow").locator("[data-testid=explain-grid]").waitFor();
      const chosen = async (side) => page.getByTestId(`pair-${side}`)
        .locator("tr.chosen").getAttribute("data-node");
      expect((await chosen("live")) === pair.live_node,
        `the live grid marks ${await chosen("live")}, the API says ${pair.live_node}`);
      if (pair.shadow_node) {
        expect((await chosen("shadow")) === pair.shadow_node,
          `the shadow grid marks ${await chosen("shadow")}, the API says ${pair.shadow_node}`);
      }
      const detail = await page.getByTestId("pair-detail").textContent();
      expect(detail === pair.detail, `detail "${detail}" vs the API's "${pair.detail}"`);
      for (const side of ["live", "shadow"]) {
        const rows = await page.getByTestId(`pair-${side}`).locator("[data-testid=grid-row]")
          .count();
        const nodes = side === "live" ? pair.live_nodes : pair.shadow_nodes;
        expect(rows === nodes.length, `${side} grid: ${rows} rows, API ${nodes.length} nodes`);
      }
      await shot("shadow-pair.png");
      return `${want.recent.length} disagreements in ${want.compared} pods; ` +
        `${pair.namespace}/${pair.name}: live ${pair.live_node}, shadow ${pair.shadow_node} ` +
        `(${pair.point} ${pair.plugin})`;
    });

    await step("6 reload with a new weight: a success row in the reload history", async () => {
      await page.getByTestId("nav-overview").click();
      await page.getByTestId("node-count").waitFor();
      const before = (await api("reloads")).reloads.length;
      // Listing a default plugin replaces it in place with this weight (config-reference.md).
      appendFileSync(config, "[profile.plugins.multi_point]\n" +
        'enabled = [{ name = "TaintToleration", weight = 5 }]\n');
      const { stdout } = await schedctl("reload");
      const rows = page.getByTestId("reload-row");
      await waitFor("a new reload-row", async () => (await rows.count()) > before, 10000);
      const result = await rows.first().getAttribute("data-result");
      expect(result === "success", `newest reload-row says ${result}: ` +
        `${await rows.first().textContent()}`);
      await rows.first().scrollIntoViewIfNeeded();
      await shot("reloads.png");
      await page.getByTestId("nav-profiles").click();
      const weight = page.locator("tr[data-point=Score][data-plugin=TaintToleration] td.weight");
      await waitFor("the profiles page to show TaintToleration's Score weight 5", async () =>
        (await weight.textContent({ timeout: 1000 })) === "5", 5000);
      await shot("profiles.png");
      return stdout.trim().split("\n")[0];
    });

    if (args.report) {
      await step("7 report: title and a rejecting cell, without a daemon", async () => {
        await page.goto(`file://${args.report}`);
        await page.getByTestId("report-title").waitFor({ timeout: 5000 });
        // The report names its pods; pick one as step 3 does, from the report itself.
        const key = await page.evaluate((rej) => {
          const r = globalThis.SCHEDHOST_REPORT;
          for (const q of r.queue) {
            const e = r.explanations[`${q.namespace}/${q.name}`];
            if (e?.nodes.some((n) => n.plugins.some((v) => q.rejected_by.includes(v.plugin) &&
              rej.includes(v.filter_code)))) return `${q.namespace}/${q.name}`;
          }
          return null;
        }, REJECTIONS);
        expect(key, "the report has no pending pod with a rejecting cell");
        await page.getByTestId("nav-queue").click();
        await page.locator(`[data-testid=queue-row][data-pod="${key}"] a`).click();
        await page.getByTestId("explain-grid").waitFor({ timeout: 5000 });
        const cells = await page.locator("[data-testid=grid-cell]").evaluateAll((els, rej) =>
          els.filter((e) => rej.includes(e.dataset.code)).length, REJECTIONS);
        expect(cells > 0, `no rejecting grid-cell on ${key}'s page`);
        await shot("report.png");
        return `${key}: ${cells} rejecting cells`;
      });
    }

    if (args["compare-report"]) {
      await step("8 compare report: the pods that differ, one opened on both sides", async () => {
        await page.goto(`file://${args["compare-report"]}`);
        await page.getByTestId("nav-compare").click();
        const rows = page.getByTestId("compare-row");
        await rows.first().waitFor({ timeout: 5000 });
        const want = await page.evaluate(() =>
          globalThis.SCHEDHOST_REPORT.compare.pods.filter((p) => p.differs).length);
        expect(await rows.count() === want, `${await rows.count()} compare-rows, want ${want}`);
        await rows.first().click();
        await page.getByTestId("compare-sides").waitFor({ timeout: 5000 });
        const sides = {};
        for (const side of ["old", "new"]) {
          const panel = page.getByTestId(`compare-${side}`);
          sides[side] = (await panel.getByTestId("compare-node").textContent()).trim();
          expect(await panel.getByTestId("explain-grid").count() === 1,
            `no explain-grid on the ${side} side`);
          expect(await panel.locator("tr.chosen td.node .name").textContent() === sides[side],
            `the ${side} grid does not mark ${sides[side]} chosen`);
        }
        expect(sides.old !== sides.new, `both sides place the pod on ${sides.old}`);
        await shot("compare.png");
        return `${want} pods differ; the first: old ${sides.old}, new ${sides.new}`;
      });
    }

    await step("no script errors in the pages", async () => {
      expect(pageErrors.length === 0, pageErrors.join("; "));
    });
    const end = await api("stats").catch(() => null);
    if (end) {
      console.log(`stats at the end: ${end.bound_pods} bound, attempts ${end.attempts_scheduled} ` +
        `scheduled / ${end.attempts_unschedulable} unschedulable / ${end.attempts_error} error`);
    }
  } finally {
    await browser?.close().catch(() => {});
    if (daemon && !daemon.exited) {
      daemon.kill("SIGTERM");
      const stopped = await Promise.race([daemonExit,
        new Promise((ok) => setTimeout(() => ok(null), 5000))]);
      if (stopped === null) daemon.kill("SIGKILL");
    }
    if (failures > 0 && existsSync(log)) {
      console.log(`schedhostd's log (last lines):\n${readFileSync(log, "utf8").slice(-1500)}`);
    }
    rmSync(tmp, { recursive: true, force: true });
    console.log(`${failures === 0 ? "passed" : `${failures} failed`} in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s`);
    process.exitCode = failures === 0 ? 0 : 1;
  }
}

main().catch((e) => {
  console.log(`FAIL: ${e.stack}`);
  process.exitCode = 1;
});
