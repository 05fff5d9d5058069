// The overview's chart: scheduling rate and mean attempt latency over the last 5 minutes. The
// daemon keeps only cumulative counters, so the browser keeps their samples and charts the
// differences between successive ones.

import { seconds, trim } from "./format";

const WINDOW_MS = 5 * 60 * 1000;

// Sample is the counters at one poll: bound pods, and the count and sum of the attempt-duration
// histogram over every profile and result (undefined while the daemon has no /latency).
export interface Sample {
  t: number;
  bound: number;
  count?: number;
  sum?: number;
}

// Module state, so that leaving the overview and coming back keeps the curve.
const samples: Sample[] = [];

export function record(s: Sample): void {
  samples.push(s);
  while (samples.length > 0 && samples[0].t < s.t - WINDOW_MS) samples.shift();
}

interface Point {
  t: number;
  // null: no point here (a counter went backwards: the daemon restarted; or no attempt ended).
  rate: number | null;
  latency: number | null;
}

function points(): Point[] {
  const out: Point[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const dt = (b.t - a.t) / 1000;
    const dBound = b.bound - a.bound;
    const dCount = (b.count ?? 0) - (a.count ?? 0);
    const dSum = (b.sum ?? 0) - (a.sum ?? 0);
    out.push({
      t: b.t,
      rate: dt > 0 && dBound >= 0 ? dBound / dt : null,
      latency: dCount > 0 && dSum >= 0 ? dSum / dCount : null,
    });
  }
  return out;
}

// niceMax rounds up to 1, 2 or 5 times a power of ten, so the axis labels read well; `empty` is
// the axis' top while there is nothing to show.
function niceMax(v: number, empty: number): number {
  if (v <= 0) return empty;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

const W = 640;
const H = 170;
const PAD = { left: 46, right: 58, top: 10, bottom: 22 };

// path draws the non-null runs of one series as separate polylines.
function path(pts: Point[], value: (p: Point) => number | null, x: (t: number) => number,
  y: (v: number) => number): string {
  let d = "";
  let pen = false;
  for (const p of pts) {
    const v = value(p);
    if (v === null) {
      pen = false;
      continue;
    }
    d += `${pen ? "L" : "M"}${x(p.t).toFixed(1)},${y(v).toFixed(1)}`;
    pen = true;
  }
  return d;
}

export function RateChart({ now }: { now: number }) {
  const pts = points();
  const rateMax = niceMax(Math.max(0, ...pts.map((p) => p.rate ?? 0)), 1);
  const latMax = niceMax(Math.max(0, ...pts.map((p) => p.latency ?? 0)), 0.001);
  const x = (t: number) => PAD.left + (1 - (now - t) / WINDOW_MS) * (W - PAD.left - PAD.right);
  const plotH = H - PAD.top - PAD.bottom;
  const yRate = (v: number) => PAD.top + plotH * (1 - v / rateMax);
  const yLat = (v: number) => PAD.top + plotH * (1 - v / latMax);
  const ticks = [0, 0.5, 1];
  return (
    <div class="chart">
      <div class="legend">
        <span class="key rate">pods/s</span>
        <span class="key latency">mean attempt latency</span>
        {pts.length === 0 && <span class="muted">collecting samples…</span>}
      </div>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img"
        aria-label="scheduling rate and mean attempt latency, last 5 minutes">
        {ticks.map((f) => {
          const yy = PAD.top + plotH * (1 - f);
          return (
            <g>
              <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={yy} y2={yy} />
              <text class="axis rate" x={PAD.left - 4} y={yy + 4} text-anchor="end">
                {trim(rateMax * f)}
              </text>
              <text class="axis latency" x={W - PAD.right + 4} y={yy + 4}>
                {f === 0 ? "0" : seconds(latMax * f)}
              </text>
            </g>
          );
        })}
        {[5, 4, 3, 2, 1, 0].map((m) => (
          <text class="axis" x={x(now - m * 60000)} y={H - 6} text-anchor="middle">
            {m === 0 ? "now" : `-${m}m`}
          </text>
        ))}
        <path class="line rate" d={path(pts, (p) => p.rate, x, yRate)} />
        <path class="line latency" d={path(pts, (p) => p.latency, x, yLat)} />
      </svg>
    </div>
  );
}
