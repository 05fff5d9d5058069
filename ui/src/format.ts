// How numbers, sizes, durations and times read on the pages.

// trim prints at most `digits` decimals without trailing zeros: 2 → "2", 0.5 → "0.5".
export function trim(v: number, digits = 2): string {
  return String(Number(v.toFixed(digits)));
}

// cores prints millicores as cores: 2500 → "2.5".
function cores(milli: number): string {
  return trim(milli / 1000, 3);
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const KiB = 1024;

// bytesPair prints two byte counts in the unit that suits the larger, so a bar's numbers compare
// at a glance: "1.5 / 8 GiB".
function bytesPair(used: number, total: number): string {
  const big = Math.max(used, total);
  const [unit, name] = big >= GiB ? [GiB, "GiB"] : big >= MiB ? [MiB, "MiB"] :
    big >= KiB ? [KiB, "KiB"] : [1, "B"];
  return `${trim(used / unit)} / ${trim(total / unit)} ${name}`;
}

// isBytes tells which resources count bytes (cpu counts millicores, the rest are counts).
function isBytes(resource: string): boolean {
  return resource === "memory" || resource.includes("storage") ||
    resource.startsWith("hugepages-");
}

// resourcePair prints requested / allocatable in the resource's natural unit.
export function resourcePair(resource: string, used: number, total: number): string {
  if (resource === "cpu") return `${cores(used)} / ${cores(total)}`;
  if (isBytes(resource)) return bytesPair(used, total);
  return `${used} / ${total}`;
}

// seconds prints a duration with a unit that keeps 3 significant digits: "84.2 µs", "1.5 s".
export function seconds(s: number): string {
  if (s < 1e-3) return `${Number((s * 1e6).toPrecision(3))} µs`;
  if (s < 1) return `${Number((s * 1e3).toPrecision(3))} ms`;
  return `${trim(s, 2)} s`;
}

// mean is sum/count as a duration, or "—" when nothing was counted.
export function mean(sum: number, count: number): string {
  return count > 0 ? seconds(sum / count) : "—";
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

// clock prints a Unix time in the browser's time zone: "2025-12-02 18:26:40".
export function clock(unixSeconds: number): string {
  if (!unixSeconds) return "—";
  const d = new Date(unixSeconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
