#!/usr/bin/env python3
"""clang-tidy over the sources of the targets a build tree lists, in merged translation units.

    scripts/tidy.py --build BUILD_DIR [--targets-file FILE] [--jobs N] [--batch N]

The sources of one target that share one compile command are checked in batches: each batch is
one generated file that #includes its sources, so the headers they share (the standard library,
Boost, gRPC, spdlog) are parsed and matched once per batch instead of once per source. clang-tidy
spends most of its time matching those headers, so this is several times faster than a run per
source, and it reports the same diagnostics: the checks in .clang-tidy look at one declaration or
statement at a time, and the sources are under HeaderFilterRegex like any header.

A merged batch can fail where a per-source run would not: file-local names of two sources may
collide (two `Nanos` helpers in two anonymous namespaces), and a check that looks at the whole
unit (bugprone-forward-declaration-namespace) sees declarations of several sources together. So
only a clean batch is taken as it is; a batch with any finding is checked again one source at a
time, and those runs give the verdict.

Exit status: 0 when every source is clean, 1 when clang-tidy reported anything, 2 on bad usage.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

# g++ flags that clang does not know; the build compiles with them, clang-tidy parses without.
GCC_ONLY_FLAGS = {"-fno-gnu-unique"}
TARGET_DIR = re.compile(r"CMakeFiles/([^/]+)\.dir/")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="build tree with compile_commands.json")
    parser.add_argument("--targets-file",
                        help="targets to check, one per line (default: BUILD/tidy-targets.txt)")
    parser.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="repository root (its .clang-tidy is used)")
    parser.add_argument("--clang-tidy", default=os.environ.get("CLANG_TIDY", "clang-tidy-14"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--batch", type=int, default=16,
                        help="most sources merged into one translation unit (1: one per source)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print each unit's sources and seconds")
    return parser.parse_args()


def command_words(entry):
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry["command"])


def compile_flags(words, source):
    """The command's words less the compiler, the source, -c and -o OUT: what a batch shares."""
    flags = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word == "-o":
            skip = True
            continue
        if word in ("-c", source) or word in GCC_ONLY_FLAGS:
            continue
        flags.append(word)
    return flags


def load_units(build, source_dir, targets):
    """((target, compiler, directory, flags), [sources]) for each group of sources that share
    one compile command and so may be checked together."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    groups = {}
    for entry in entries:
        source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        words = command_words(entry)
        output = words[words.index("-o") + 1] if "-o" in words else entry.get("output", "")
        match = TARGET_DIR.search(output)
        # Generated sources (protobuf) live in the build tree and are not ours to check.
        if not match or match.group(1) not in targets or not source.startswith(source_dir + os.sep):
            continue
        if not source.endswith((".cc", ".cpp", ".cxx", ".c")):
            continue
        flags = compile_flags(words, entry["file"])
        key = (match.group(1), words[0], entry["directory"], tuple(flags))
        groups.setdefault(key, []).append(source)
    return [(key, sorted(sources)) for key, sources in sorted(groups.items())]


class Checker:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.config = os.path.join(args.source_dir, ".clang-tidy")

    def run(self, source, directory, flags):
        # The compile flags go after "--", so no compilation database is consulted and the
        # generated batch files need none.
        cmd = [self.args.clang_tidy, "--quiet", f"--config-file={self.config}", source, "--",
               *flags, "-Wno-unknown-warning-option"]
        proc = subprocess.run(cmd, cwd=directory, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, check=False)
        return proc.returncode, proc.stdout

    def check_batch(self, index, key, sources):
        started = time.monotonic()
        result = self.check(index, key, sources)
        return (*result, time.monotonic() - started)

    def check(self, index, key, sources):
        target, _, directory, flags = key
        if len(sources) == 1:
            code, out = self.run(sources[0], directory, flags)
            return sources, code, out, False
        merged = os.path.join(self.work, f"{target}.{index}.cc")
        with open(merged, "w", encoding="utf-8") as f:
            f.write("// Generated by scripts/tidy.py: these sources checked as one unit.\n")
            for source in sources:
                f.write(f'#include "{source}"  // NOLINT(bugprone-suspicious-include)\n')
        code, out = self.run(merged, directory, flags)
        if code == 0:
            return sources, code, out, False
        # Findings of a merged unit are not final: it may not compile (names that collide across
        # sources), and a check that looks at the whole unit sees more than one source's
        # (bugprone-forward-declaration-namespace). What a run per source says is the verdict.
        outputs = []
        failed = 0
        for source in sources:
            c, o = self.run(source, directory, flags)
            # Any non-zero status fails, a crash's negative one included.
            failed = failed or c
            outputs.append(o)
        return sources, failed, "".join(outputs), True


def main():
    args = parse_args()
    build = os.path.abspath(args.build)
    source_dir = os.path.abspath(args.source_dir)
    targets_file = args.targets_file or os.path.join(build, "tidy-targets.txt")
    if args.batch < 1 or args.jobs < 1:
        print("tidy.py: --batch and --jobs must be at least 1", file=sys.stderr)
        return 2
    if not shutil.which(args.clang_tidy):
        print(f"tidy.py: {args.clang_tidy} not found (install clang-tidy-14)", file=sys.stderr)
        return 2
    for path in (os.path.join(build, "compile_commands.json"), targets_file):
        if not os.path.exists(path):
            print(f"tidy.py: {path} is missing: configure the tree with SCHEDHOST_CLANG_TIDY=ON",
                  file=sys.stderr)
            return 2
    with open(targets_file, encoding="utf-8") as f:
        targets = {line.strip() for line in f if line.strip()}
    units = load_units(build, source_dir, targets)
    batches = []
    for key, sources in units:
        for start in range(0, len(sources), args.batch):
            batches.append((key, sources[start:start + args.batch]))
    # Largest batches first, so the last job to finish is a short one.
    batches.sort(key=lambda b: -len(b[1]))
    work = os.path.join(build, "tidy")
    os.makedirs(work, exist_ok=True)
    checker = Checker(args, work)
    total = sum(len(s) for _, s in batches)
    print(f"clang-tidy: {total} sources of {len(targets)} targets in {len(batches)} units, "
          f"{args.jobs} at a time", flush=True)
    started = time.monotonic()
    failed = []
    split = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(checker.check_batch, i, key, sources)
                   for i, (key, sources) in enumerate(batches)]
        for future in concurrent.futures.as_completed(futures):
            sources, code, out, was_split, seconds = future.result()
            split += was_split
            names = ", ".join(os.path.relpath(s, source_dir) for s in sources)
            if args.verbose:
                how = "one by one after the merged unit failed" if was_split else "merged"
                print(f"  {seconds:5.1f} s  {names} ({how})", flush=True)
            if code != 0:
                failed.append(names)
                print(f"--- clang-tidy FAILED on {names}\n{out}", flush=True)
    took = time.monotonic() - started
    print(f"clang-tidy: {total} sources in {took:.0f} s; {split} merged units checked one source "
          f"at a time; {len(failed)} units with findings", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
