#!/usr/bin/env python3
"""Checks that every relative link of the Markdown files under an install tree resolves there.

    check_doc_links.py ROOT

Every `[text](target)`, `![alt](target)` and `[label]: target` outside code (fenced blocks and
`code spans`) whose target has no scheme is resolved against the directory of the file that
holds it: the file must exist, and a `#fragment` must be the GitHub anchor of one of its headings
(a bare `#fragment` names a heading of the same file). Prints each broken link as
`file:line: target: why` and exits 1 when there is one, 2 when ROOT holds no Markdown file.
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(path):
    """Yields (line number, text) of the lines outside fenced code, code spans blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None:
                yield number, re.sub(r"`+[^`]*`+", "``", line.rstrip("\n"))


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found = set()
        counts = {}
        fence = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = FENCE.match(line)
                if m:
                    fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
                    continue
                h = HEADING.match(line) if fence is None else None
                if h:
                    s = slug(h.group(1))
                    n = counts.get(s, 0)
                    counts[s] = n + 1
                    found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def check(path):
    broken = []
    for number, line in prose_lines(path):
        targets = [m.group(1) for m in LINK.finditer(line)]
        d = DEFINITION.match(line)
        if d:
            targets.append(d.group(1))
        for target in targets:
            if not target or SCHEME.match(target):
                continue
            file_part, _, fragment = target.partition("#")
            resolved = (os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                        if file_part else path)
            if not os.path.exists(resolved):
                broken.append(f"{path}:{number}: {target}: {resolved} is not installed")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                broken.append(f"{path}:{number}: {target}: no heading #{fragment} in {resolved}")
    return broken


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(root) for f in names
                   if f.endswith(".md"))
    if not files:
        print(f"no Markdown file under {root}")
        return 2
    broken = [b for f in files for b in check(f)]
    for b in broken:
        print(b)
    print(f"{len(files)} Markdown files, {len(broken)} broken relative links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
