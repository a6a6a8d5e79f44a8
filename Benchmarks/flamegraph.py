#!/usr/bin/python3
"""A flame graph (SVG) from `perf script` output, for the profiles in bench-results (issue 19).

Reads `perf script` text on stdin (a `perf record -g` of one process), folds each sample's call
stack root first, and draws one box per frame whose width is its share of the samples. Frames are
coloured by layer (libzmq, kernel, Swift runtime, libc, Lyceum), so the split the limits notes
tabulate is visible at a glance. Hovering a box shows its name, samples and share.

Usage: perf script -i perf.data | Benchmarks/flamegraph.py --title TITLE [--thread NAME] > out.svg
       --folded prints the folded stacks ("a;b;c COUNT") instead of an SVG.
"""
import argparse
import html
import re
import sys
from collections import defaultdict

WIDTH, ROW, FONT = 1200, 16, 11
MIN_WIDTH = 0.3  # pixels: narrower frames are dropped from the drawing, not from the totals


def samples(lines, thread):
    """Yields (thread, [frames root first]) for each sample of `perf script` output."""
    header, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if header is not None:
                if thread is None or header == thread:
                    yield header, list(reversed(frames))
            header, frames = None, []
        elif not line.startswith((" ", "\t")):
            header = line.split()[0]
        else:
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                frames.append(tidy(parts[1]))
    if header is not None and (thread is None or header == thread):
        yield header, list(reversed(frames))


def tidy(frame):
    """`symbol+0x1f (dso)` → `symbol [dso]`, Swift's long names shortened."""
    match = re.match(r"(.*?)(\+0x[0-9a-f]+)? \((.*)\)$", frame)
    symbol, dso = (match.group(1), match.group(3)) if match else (frame, "")
    dso = dso.rsplit("/", 1)[-1]
    symbol = re.sub(r"\(.*\)", "", symbol)  # argument lists
    symbol = re.sub(r" in \S+$", "", symbol)
    return f"{symbol[:90]} [{dso}]" if dso else symbol[:90]


def colour(name):
    if "kernel" in name:
        return "#e8a060"
    if "libzmq" in name:
        return "#d06060"
    if "libswiftCore" in name or "swift_" in name:
        return "#7090d0"
    if "libc.so" in name or "malloc" in name or "free" in name:
        return "#a0a0a0"
    return "#70b070"


def fold(stacks):
    counts = defaultdict(int)
    for thread, frames in stacks:
        counts[";".join([thread] + frames)] += 1
    return counts


def tree(counts):
    root = {"name": "all", "count": 0, "children": {}}
    for stack, count in counts.items():
        root["count"] += count
        node = root
        for frame in stack.split(";"):
            node = node["children"].setdefault(frame, {"name": frame, "count": 0, "children": {}})
            node["count"] += count
    return root


def depth(node):
    return 1 + max((depth(child) for child in node["children"].values()), default=0)


def draw(root, title):
    total = root["count"] or 1
    rows = depth(root)
    height = (rows + 3) * ROW
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace" font-size="{FONT}">',
           f'<rect width="100%" height="100%" fill="#fcfcf6"/>',
           f'<text x="{WIDTH / 2}" y="{ROW}" text-anchor="middle" font-size="{FONT + 3}">{html.escape(title)} ({total} samples)</text>']

    def box(node, x, level):
        width = node["count"] / total * WIDTH
        if width < MIN_WIDTH:
            return
        y = height - (level + 1) * ROW
        share = 100 * node["count"] / total
        label = html.escape(node["name"])
        out.append(f'<g><title>{label}: {node["count"]} samples, {share:.2f}%</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{ROW - 1}" fill="{colour(node["name"])}"/>')
        fits = int(width / (FONT * 0.6))
        if fits >= 4:
            text = node["name"] if len(node["name"]) <= fits else node["name"][:fits - 2] + ".."
            out.append(f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{html.escape(text)}</text>')
        out.append("</g>")
        for child in sorted(node["children"].values(), key=lambda c: c["name"]):
            box(child, x, level + 1)
            x += child["count"] / total * WIDTH

    box(root, 0, 0)
    out.append("</svg>")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--title", default="perf")
    parser.add_argument("--thread", help="only samples of this thread (perf script's first column)")
    parser.add_argument("--folded", action="store_true")
    arguments = parser.parse_args()
    counts = fold(samples(sys.stdin, arguments.thread))
    if arguments.folded:
        for stack, count in sorted(counts.items()):
            print(stack, count)
    else:
        print(draw(tree(counts), arguments.title))


if __name__ == "__main__":
    main()
