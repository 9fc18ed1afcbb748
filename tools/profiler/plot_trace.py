#!/usr/bin/python3
"""Renders an mxplug Chrome trace (MXPLUG_PROFILER=trace.json) as a timeline picture: one row per
engine worker thread, one bar per function, labelled with its name.

    tools/profiler/plot_trace.py trace.json timeline.png [--title TEXT]
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("output")
    parser.add_argument("--title", default="mxplug engine timeline")
    args = parser.parse_args(argv)

    with open(args.trace) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    if not events:
        sys.exit("%s has no complete events" % args.trace)
    t0 = min(e["ts"] for e in events)
    rows = sorted({(e["args"]["device"], e["tid"]) for e in events})
    row_of = {r: i for i, r in enumerate(rows)}

    span = max(e["ts"] + e["dur"] for e in events) - t0
    fig, ax = plt.subplots(figsize=(9, 0.7 * len(rows) + 1.4))
    colors = plt.get_cmap("tab10")
    names = sorted({e["name"] for e in events})
    for e in events:
        y = row_of[(e["args"]["device"], e["tid"])]
        start, dur = (e["ts"] - t0) / 1000.0, max(e["dur"], 1) / 1000.0
        ax.broken_barh([(start, dur)], (y - 0.35, 0.7), color=colors(names.index(e["name"]) % 10))
        if e["dur"] > 0.12 * span:
            ax.text(start + dur / 2, y, e["name"], ha="center", va="center", fontsize=8, color="white")
        else:  # too narrow to hold its name: write it beside the bar
            ax.text(start + dur, y - 0.42, " " + e["name"], ha="left", va="bottom", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(["%s worker %d" % r for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(args.title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])
