#!/usr/bin/env python3
"""Runs schedhost-bench with --json and checks the run completed: every measured pod bound,
the JSON well formed with the figures the README documents. No timing assertions.

With `--reference fused` among the flags, also checks the fused reference bound every measured
pod and the framework/fused ratio is there. With `--peer upstream`, checks both sides ran every
run and reported their figures, and the ratios are there.

usage: check_bench.py BENCH_BINARY WORKLOAD [bench flags...]"""
import json
import subprocess
import sys


def main():
    bench, workload, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    proc = subprocess.run([bench, "--json", "--quiet", *flags, workload],
                          capture_output=True, text=True,
                          timeout=540 if "--peer" in flags else 110)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"schedhost-bench exited {proc.returncode}")
    doc = json.loads(proc.stdout)
    if "--peer" in flags:
        check_peer(doc, workload, flags)
        return
    [w] = doc["workloads"]
    assert w["name"] == workload, w["name"]
    assert w["measured_pods"] > 0, w
    assert w["measured_bound_min"] == w["measured_pods"], (
        f'{w["measured_bound_min"]} of {w["measured_pods"]} measured pods bound')
    for key in ("pods_per_second", "p50_ms", "p90_ms", "p99_ms", "attempts", "peak_rss_mib",
                "bytes_per_node", "snapshot_bytes_per_node", "bytes_per_pending_pod", "max_gap_ms"):
        spread = w[key]
        assert spread["min"] <= spread["median"] <= spread["max"], (key, spread)
    assert w["pods_per_second"]["min"] > 0, w["pods_per_second"]
    assert w["attempts"]["min"] >= w["measured_pods"], w["attempts"]
    assert w["peak_rss_mib"]["min"] > 0, w["peak_rss_mib"]
    assert w["bytes_per_node"]["min"] > 0, w["bytes_per_node"]
    assert 0 < w["snapshot_bytes_per_node"]["min"] < w["bytes_per_node"]["min"], w
    # Only a workload with an operation of pods that all stay pending gives bytes per pending pod.
    if workload in ("unschedulable_churn", "pending_pods"):
        assert w["bytes_per_pending_pod"]["min"] > 0, w["bytes_per_pending_pod"]
    if "--swap-every" in flags:
        # Every run swapped at least once while measuring, and timed it.
        for run in w["runs"]:
            assert run.get("swaps", 0) > 0, run
            assert 0 < run["swap_ms"]["median"] <= run["swap_ms"]["max"], run
            assert 0 < run["swap_build_ms"]["median"] <= run["swap_build_ms"]["max"], run
    if "--reference" in flags:
        fused = w["fused_reference"]
        assert fused["measured_pods"] == w["measured_pods"], fused
        assert fused["measured_bound_min"] == fused["measured_pods"], (
            f'fused: {fused["measured_bound_min"]} of {fused["measured_pods"]} bound')
        assert fused["pods_per_second"]["min"] > 0, fused
        assert w["framework_to_fused"] > 0, w.get("framework_to_fused")
    print(f'{workload}: {w["measured_pods"]} measured pods bound, '
          f'{w["pods_per_second"]["median"]:.0f} pods/s')


def check_peer(doc, workload, flags):
    [w] = doc["workloads"]
    assert w["name"] == workload, w["name"]
    runs = int(flags[flags.index("--repeat") + 1]) if "--repeat" in flags else 1
    assert w["runs"] == runs == len(w["schedhost_runs"]) == len(w["upstream_runs"]), w["runs"]
    up = w["upstream"]
    assert up["version"].startswith("v1."), up["version"]
    for side in (w, up):
        assert side["pods_per_second"]["min"] > 0, side["pods_per_second"]
        assert side["peak_rss_mib"]["min"] > 0, side["peak_rss_mib"]
    for run in w["upstream_runs"]:
        assert 0 < run["measured_bound"] <= run["measured_pods"], run
    assert len(w["upstream_unbound"]) == sum(
        r["measured_bound"] < r["measured_pods"] for r in w["upstream_runs"]), w["upstream_unbound"]
    ratio = w["ratio"]
    assert ratio["pods_per_second"] > 0 and ratio["memory"] > 0, ratio
    print(f'{workload}: schedhost {w["pods_per_second"]["median"]:.0f} pods/s, upstream '
          f'{up["pods_per_second"]["median"]:.0f} pods/s ({ratio["pods_per_second"]:.1f}x)')


if __name__ == "__main__":
    main()
