#!/usr/bin/env python3
"""Summarise the raw benchmark CSVs written by scripts/bench.

Usage: python3 scripts/lib/bench_report.py RESULTS_DIR

Reads RESULTS_DIR/{overhead,overhead_f,msgrate,rtt,commdup,recvcost,threadcomm,threadcomm_bw,
threadcomm_msgrate,threadcomm_coll,threadcomm_scaling_msgrate,threadcomm_scaling_allreduce}.csv (missing ones are skipped) and writes, per figure and MPI, <figure>-<mpi>.png and
<figure>-<mpi>-ratio.png, per figure <figure>-points.csv, and summary.md.
Prints one line per target. Exits 0 whether targets are met or not; non-zero
only on malformed input.
"""
import csv
import datetime
import fnmatch
import math
import os
import statistics
import sys

# ---------------------------------------------------------------- definitions
# Series order per figure (unknown series are appended in order of appearance),
# what the value is, and how the axes are drawn.
# native-threadcomm: the MPI's own MPIX_Threadcomm (MPICH 4.2), without tsmpi.
# cache-line-floor: bench/cache_floor.c, what the hardware allows (latency at 8 B, rate at 64).
THREADCOMM_SERIES = ["thread-ranks", "native-threadcomm", "procs-tsmpi", "procs-native", "cache-line-floor"]
THREADCOMM_COLLECTIVES = ["barrier", "bcast-8", "bcast-64K", "allreduce-8", "allreduce-64K"]
THREADCOMM_RATIOS = [("thread-ranks", "procs-native"), ("thread-ranks", "procs-tsmpi"),
                     ("procs-tsmpi", "procs-native"), ("thread-ranks", "native-threadcomm"),
                     ("native-threadcomm", "procs-native"), ("thread-ranks", "cache-line-floor"),
                     ("procs-native", "cache-line-floor")]
THREADCOMM_SCALING_SERIES = ["thread-ranks", "thread-ranks-4procs", "native-threadcomm", "native-threadcomm-4procs",
                             "procs-native"]
THREADCOMM_SCALING_RATIOS = [("thread-ranks", "procs-native"), ("thread-ranks", "native-threadcomm"),
                             ("thread-ranks-4procs", "native-threadcomm-4procs")]
FIGURES = {
    "overhead": dict(series=["native-single", "native-multiple", "tsmpi-passthrough",
                             "tsmpi-default", "tsmpi-serialize", "tsmpi-check"],
                     what="one-way latency", unit="µs", better="lower",
                     xlabel="message size (bytes)", xlog2=True, ylog=True, patterns=["-"]),
    # The same ping-pong from Fortran (bench/overhead_f.F90, use mpi_f08): the MPI's binding,
    # redirected into tsmpi's wrappers (docs/fortran.md).
    "overhead_f": dict(series=["native-single", "native-multiple", "tsmpi-passthrough",
                               "tsmpi-default", "tsmpi-serialize"],
                       what="one-way latency from Fortran", unit="µs", better="lower",
                       xlabel="message size (bytes)", xlog2=True, ylog=True, patterns=["-"]),
    "msgrate": dict(series=["native-probe", "native-mprobe", "tsmpi-mprobe", "tsmpi-lock2d",
                            "tsmpi-helper", "tsmpi-serialize", "tsmpi-mprobe-check"],
                    what="message rate", unit="msg/s", better="higher",
                    xlabel="message size (bytes)", xlog2=True, ylog=True, patterns=["directed", "any"]),
    "rtt": dict(series=["native-probe", "native-mprobe", "tsmpi-mprobe", "tsmpi-lock2d",
                        "tsmpi-helper"],
                what="round-trip time", unit="µs", better="lower",
                xlabel="message size (bytes)", xlog2=True, ylog=True, patterns=["directed", "any"]),
    # Receive rate against the number of receiving threads (scripts/bench run_scaling): any/any
    # is bench/msgrate.c, mixed tests/mpi/scale_probe.c.
    "scaling": dict(series=["native-probe", "native-mprobe", "tsmpi-mprobe", "tsmpi-lock2d", "tsmpi-helper",
                            "tsmpi-serialize"],
                    what="message rate against receiving threads", unit="msg/s", better="higher",
                    xlabel="receiving threads", xname="threads", xlog2=True, ylog=True, patterns=["any", "mixed"]),
    "commdup": dict(series=["native-single", "native-multi1", "native-multi2",
                            "tsmpi-serialize-multi1", "tsmpi-serialize-multi2"],
                    what="time per MPI_Comm_dup", unit="µs", better="lower",
                    xlabel="number of MPI processes", xlog2=False, ylog=False, patterns=["-"]),
    # One process, no other thread: what a probe -> receive costs (bench/receive_cost.c).
    "recvcost": dict(series=["native-mprobe", "native-probe", "tsmpi-mprobe", "tsmpi-lock2d",
                             "tsmpi-helper", "tsmpi-serialize", "tsmpi-mprobe-check"],
                     what="time per probe -> receive, one process", unit="ns", better="lower",
                     xlabel="message size (bytes)", xlog2=False, ylog=False, patterns=["-"]),
    # Threads as MPI ranks (bench/threadcomm.c): two thread-ranks of one process on a threadcomm
    # against two processes on MPI_COMM_WORLD, under tsmpi and natively. The ping-pong gives
    # threadcomm (latency) and threadcomm_bw (size / latency); the collectives one panel per
    # call and size, x = the number of ranks (threads of one process, or processes).
    "threadcomm": dict(series=THREADCOMM_SERIES, what="ping-pong one-way latency, 2 ranks", unit="µs",
                       better="lower", xlabel="message size (bytes)", xlog2=True, ylog=True, patterns=["-"]),
    "threadcomm_bw": dict(series=THREADCOMM_SERIES, what="ping-pong bandwidth, 2 ranks", unit="MB/s",
                          better="higher", xlabel="message size (bytes)", xlog2=True, ylog=True, patterns=["-"]),
    "threadcomm_msgrate": dict(series=THREADCOMM_SERIES, what="message rate of 8-byte MPI_Isend windows, 2 ranks",
                               unit="msg/s", better="higher", xlabel="window (messages in flight)", xname="window",
                               xlog2=True, ylog=True, patterns=["-"]),
    "threadcomm_coll": dict(series=THREADCOMM_SERIES, what="time per collective call", unit="µs", better="lower",
                            xlabel="ranks (threads of 1 process, or processes)", xname="ranks",
                            xlog2=True, ylog=True, patterns=THREADCOMM_COLLECTIVES),
    # Thread-ranks against their number (scripts/bench run_threadcomm_scaling): T per process in
    # one process, 4 processes of 64 (-4procs), or T processes.
    "threadcomm_scaling_msgrate": dict(series=THREADCOMM_SCALING_SERIES,
                                       what="message rate of pairs (8-byte Isend windows of 64), all pairs",
                                       unit="msg/s", better="higher", xlabel="ranks per process (or processes)",
                                       xname="ranks", xlog2=True, ylog=True, patterns=["-"]),
    "threadcomm_scaling_allreduce": dict(series=THREADCOMM_SCALING_SERIES, what="time per Allreduce of one double",
                                         unit="µs", better="lower", xlabel="ranks per process (or processes)",
                                         xname="ranks", xlog2=True, ylog=True, patterns=["-"]),
}

# Ratios: (series glob, baseline) per figure; a series never compares to itself.
RATIOS = {
    "overhead": [("tsmpi-*", "native-multiple"), ("tsmpi-serialize", "native-single")],
    "overhead_f": [("tsmpi-*", "native-multiple"), ("tsmpi-serialize", "native-single")],
    "msgrate": [("*", "native-mprobe")],
    "rtt": [("*", "native-mprobe")],
    "recvcost": [("*", "native-mprobe")],
    "scaling": [("*", "native-mprobe")],
    "commdup": [("tsmpi-serialize-multi1", "native-multi1"),
                ("tsmpi-serialize-multi2", "native-multi2"),
                ("native-multi1", "native-single"), ("native-multi2", "native-single")],
    "threadcomm": THREADCOMM_RATIOS,
    "threadcomm_bw": THREADCOMM_RATIOS,
    "threadcomm_msgrate": THREADCOMM_RATIOS,
    "threadcomm_coll": THREADCOMM_RATIOS,
    "threadcomm_scaling_msgrate": THREADCOMM_SCALING_RATIOS,
    "threadcomm_scaling_allreduce": THREADCOMM_SCALING_RATIOS,
}

# Targets on the geometric mean over x of the per-point median paired ratios, or on one point.
# (figure, series, baseline, op, bound, patterns, mpis or None for every MPI[, x of the point])
TARGETS = [
    ("overhead", "tsmpi-passthrough", "native-multiple", "<=", 1.05, ["-"], None),
    ("overhead", "tsmpi-serialize", "native-single", "<=", 1.05, ["-"], None),
    # Checking mode (TSMPI_CHECK=warn, happens-before) up to 1 KiB.
    ("overhead", "tsmpi-check", "native-multiple", "<=", 1.3, ["-"], None, ("<=", 1024)),
    ("overhead_f", "tsmpi-passthrough", "native-multiple", "<=", 1.05, ["-"], None),
    ("msgrate", "tsmpi-mprobe", "native-mprobe", ">=", 0.95, ["directed", "any"], None),
    ("msgrate", "tsmpi-lock2d", "native-mprobe", ">=", 0.80, ["directed"], None),
    ("msgrate", "tsmpi-helper", "native-mprobe", ">=", 0.80, ["directed"], None),
    ("msgrate", "tsmpi-serialize", "native-mprobe", ">=", 1.00, ["directed", "any"], ["openmpi"]),
    ("msgrate", "tsmpi-mprobe-check", "native-mprobe", ">=", 0.70, ["any"], None),
    # Thread count: mprobe at least 0.95x, every policy and serialize mode at least 0.5x native
    # MPI_Mprobe at the same number of receiving threads.
    ("scaling", "tsmpi-mprobe", "native-mprobe", ">=", 0.95, ["any", "mixed"], None),
    ("scaling", "tsmpi-lock2d", "native-mprobe", ">=", 0.50, ["any", "mixed"], None),
    ("scaling", "tsmpi-helper", "native-mprobe", ">=", 0.50, ["any", "mixed"], None),
    ("scaling", "tsmpi-serialize", "native-mprobe", ">=", 0.50, ["any", "mixed"], None),
    # Threads as ranks against the MPI's own processes (issue 33's targets, reported only):
    # latency at 8 B, bandwidth at 1 MiB, message rate at window 64, the small collectives over
    # T = 2, 4, 8.
    ("threadcomm", "thread-ranks", "procs-native", "<=", 0.5, ["-"], None, 8),
    ("threadcomm_bw", "thread-ranks", "procs-native", ">=", 1.5, ["-"], None, 1 << 20),
    ("threadcomm_msgrate", "thread-ranks", "procs-native", ">=", 1.0, ["-"], None, 64),
    ("threadcomm_coll", "thread-ranks", "procs-native", "<=", 1.0, ["barrier", "bcast-8", "allreduce-8"], None),
]

COLUMNS = ["mpi", "figure", "series", "pattern", "x", "rep", "value", "false_matches"]
PATTERN_ORDER = ["directed", "any", "mixed", "-"]
MPI_ORDER = ["openmpi", "mpich"]
MPI_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}
PATTERN_TITLES = {"directed": "(a) directed", "any": "(b) any/any", "mixed": "(c) mixed (s,t) (s,*) (*,t) (*,*)"}
OPS = {"<=": ("≤", lambda r, b: r <= b), ">=": ("≥", lambda r, b: r >= b)}
NA = ("", "na", "nan")


class InputError(Exception):
    pass


def ordered(items, order):
    """items in `order` first, then the rest in their order of appearance."""
    items, order = list(dict.fromkeys(items)), list(dict.fromkeys(order))
    return [i for i in order if i in items] + [i for i in items if i not in order]


# ---------------------------------------------------------------- reading
def read_figure(path, figure):
    """-> {(mpi, pattern, series, x, rep): (value or None, false_matches or None)}, series seen."""
    data, seen = {}, []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}:1: header lacks column(s) {', '.join(missing)}")
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not any((v or "").strip() for v in row.values()):
                continue  # blank line
            if any(row[c] is None for c in COLUMNS):
                raise InputError(f"{where}: too few fields")
            if row["figure"] != figure:
                raise InputError(f"{where}: figure {row['figure']!r} in {figure}.csv")
            key = (row["mpi"], row["pattern"], row["series"],
                   parse_int(row["x"], "x", where), parse_int(row["rep"], "rep", where))
            value = parse_opt(row["value"], float, "value", where)
            fm = parse_opt(row["false_matches"], int, "false_matches", where)
            if key in data:  # a rerun of one rep: the last line wins
                print(f"bench_report: {where}: duplicate point, keeping this line", file=sys.stderr)
            data[key] = (value, fm)
            seen.append(row["series"])
    return data, seen


def parse_int(text, name, where):
    try:
        return int(text.strip())
    except ValueError:
        raise InputError(f"{where}: {name} {text!r} is not an integer") from None


def parse_opt(text, kind, name, where):
    if text.strip().lower() in NA:
        return None
    try:
        v = kind(text.strip())
    except ValueError:
        raise InputError(f"{where}: {name} {text!r} is neither a number nor NA") from None
    return None if isinstance(v, float) and math.isnan(v) else v


# ---------------------------------------------------------------- statistics
def ratio_pairs(figure, series):
    """(series, baseline) pairs of RATIOS that apply to the series present."""
    pairs = []
    for glob, base in RATIOS.get(figure, []):
        if base in series:  # a baseline some MPI has not (native-threadcomm) gives no ratio
            pairs += [(s, base) for s in series if fnmatch.fnmatchcase(s, glob) and s != base]
    return list(dict.fromkeys(pairs))


def summarise(figure, data, seen):
    """Per point stats and paired ratios -> (points, ratios, layout).

    points[(mpi, pattern, series, x)] = dict(values, fm)
    ratios[(mpi, pattern, series, baseline, x)] = list of per-rep ratios
    """
    series = ordered(seen, FIGURES.get(figure, {}).get("series", []))
    points, byrep = {}, {}
    for (mpi, pattern, s, x, rep), (value, fm) in data.items():
        p = points.setdefault((mpi, pattern, s, x), dict(values=[], fm=None))
        if value is not None:
            p["values"].append(value)
            byrep[(mpi, pattern, s, x, rep)] = value
        if fm is not None:
            p["fm"] = (p["fm"] or 0) + fm
    ratios = {}
    pairs = ratio_pairs(figure, series)
    for (mpi, pattern, s, x, rep), value in byrep.items():
        for s2, base in pairs:
            b = byrep.get((mpi, pattern, base, x, rep))
            # Paired within a rep: a rep is one interleaved pass over all series.
            if s2 == s and b is not None and b > 0:
                ratios.setdefault((mpi, pattern, s, base, x), []).append(value / b)
    layout = dict(series=series, pairs=pairs,
                  mpis=ordered({k[0] for k in points}, MPI_ORDER),
                  patterns=ordered([k[1] for k in points],
                                   PATTERN_ORDER + FIGURES.get(figure, {}).get("patterns", [])),
                  xs=sorted({k[3] for k in points}))
    return points, ratios, layout


def geomean(values):
    return 0.0 if min(values) <= 0 else math.exp(sum(map(math.log, values)) / len(values))


def evaluate_targets(results, mpis_seen):
    """One row per target, MPI and pattern, in TARGETS order."""
    rows = []
    for figure, s, base, op, bound, patterns, mpis, *at in TARGETS:
        at = at[0] if at else None
        # `at`: one point (an x), or ("<=", x): the points up to x.
        def selected(x):
            if at is None:
                return True
            if isinstance(at, tuple):
                return x <= at[1]
            return x == at
        # Every MPI that was run (all if none was) that the target applies to.
        for mpi in mpis_seen or MPI_ORDER:
            if mpis is None or mpi in mpis:
                for pattern in patterns:
                    ratios = results.get(figure, ({}, {}, {}))[1]
                    per_x = {x: statistics.median(r) for (m, p, s2, b, x), r in ratios.items()
                             if (m, p, s2, b) == (mpi, pattern, s, base) and selected(x)}
                    row = dict(mpi=mpi, figure=figure, pattern=pattern, series=s, baseline=base,
                               op=op, bound=bound, at=at, geomean=None, worst=None, met=None)
                    if per_x:
                        row["geomean"] = geomean(list(per_x.values()))
                        pick = max if op == "<=" else min  # the point farthest on the wrong side
                        row["worst"] = pick(per_x.items(), key=lambda kv: kv[1])
                        row["met"] = OPS[op][1](row["geomean"], bound)
                    rows.append(row)
    return rows


# ---------------------------------------------------------------- formatting
def sig3(v):
    """3 significant digits, trailing zeros kept (1.00, 45.6, 456)."""
    if v == 0:
        return "0"
    return f"{v:.{max(0, 2 - math.floor(math.log10(abs(v))))}f}"


def fmt_value(v, unit):
    if v is None:
        return "n/a"
    if unit != "msg/s":
        return f"{v:.2f}"
    r = float(f"{v:.3g}")  # pick the prefix after rounding: 999999 -> 1.00 M
    return f"{sig3(r / 1e6)} M" if r >= 1e6 else f"{sig3(r / 1e3)} k" if r >= 1e3 else sig3(r)


def fmt_ratio(v):
    return "n/a" if v is None else f"{v:.3f}"


def fmt_x(x):
    for shift, suffix in ((20, "M"), (10, "K")):
        if x >= 1 << shift and x % (1 << shift) == 0:
            return f"{x >> shift}{suffix}"
    return str(x)


def median_or_none(values):
    return statistics.median(values) if values else None


def at_text(at):
    """A target's points: all (""), one x, or ("<=", x): those up to x."""
    if at is None:
        return ""
    if isinstance(at, tuple):
        return f" for x ≤ {at[1]}"
    return f" at x={at}"


def target_text(row):
    return f"{row['series']}/{row['baseline']} {OPS[row['op']][0]} {row['bound']:.2f}{at_text(row.get('at'))}"


def result_text(row):
    return "not measured" if row["met"] is None else "✔ met" if row["met"] else "✘ missed"


# ---------------------------------------------------------------- outputs
def write_points(out_dir, figure, points, ratios, layout):
    """One row per (mpi, pattern, series, x) and baseline; ratio columns empty without one."""
    num = lambda v: "" if v is None else f"{v:.6g}"
    with open(os.path.join(out_dir, f"{figure}-points.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["mpi", "figure", "series", "pattern", "x", "reps", "median", "min", "max",
                    "baseline", "ratio_median", "ratio_min", "ratio_max", "false_matches_total"])
        for mpi in layout["mpis"]:
            for pattern in layout["patterns"]:
                for s in layout["series"]:
                    bases = [b for s2, b in layout["pairs"] if s2 == s] or [None]
                    for x in layout["xs"]:
                        p = points.get((mpi, pattern, s, x))
                        if p is None:
                            continue
                        v = p["values"]
                        stats = [len(v), median_or_none(v), min(v, default=None), max(v, default=None)]
                        for base in bases:
                            r = ratios.get((mpi, pattern, s, base, x), [])
                            w.writerow([mpi, figure, s, pattern, x, stats[0]] + [num(u) for u in stats[1:]]
                                       + [base or "", num(median_or_none(r)), num(min(r, default=None)),
                                          num(max(r, default=None)), "" if p["fm"] is None else p["fm"]])


def plot_figure(out_dir, figure, mpi, points, ratios, layout, targets, plt):
    """<figure>-<mpi>.png (values) and <figure>-<mpi>-ratio.png (ratios to baselines)."""
    spec = FIGURES[figure]
    # msgrate and rtt always get both panels, as in the paper, even if one has no data.
    patterns = ordered(spec["patterns"] + [k[1] for k in points if k[0] == mpi], PATTERN_ORDER)
    xs = sorted({k[3] for k in points if k[0] == mpi})
    pos = x_positions(xs, spec["xlog2"])
    colour = {s: f"C{i % 10}" for i, s in enumerate(layout["series"])}
    title = f"{figure} — {spec['what']} ({spec['unit']}, {spec['better']} is better), {MPI_NAMES.get(mpi, mpi)}"

    def draw(kind):
        # 100 dpi: 1000 px for one panel, 1450 px for two.
        # (threadcomm_coll: one per collective, 4 inches each)
        inches = 10 if len(patterns) == 1 else 14.5 if len(patterns) == 2 else 4 * len(patterns)
        fig, axes = plt.subplots(1, len(patterns), figsize=(inches, 5.5),
                                 squeeze=False, sharey=True)
        for ax, pattern in zip(axes[0], patterns):
            if kind == "value":
                lines = [(s, s, "-", [points.get((mpi, pattern, s, x), {}).get("values", []) for x in xs])
                         for s in layout["series"]]
            else:
                lines = [(s, f"{s} / {b}", "-" if i == 0 else "-.",
                          [ratios.get((mpi, pattern, s, b, x), []) for x in xs])
                         for s in layout["series"]
                         for i, b in enumerate(b for s2, b in layout["pairs"] if s2 == s)]
            for s, label, style, per_x in lines:
                if not any(per_x):
                    continue
                med = [statistics.median(v) if v else math.nan for v in per_x]
                lo = [min(v) if v else math.nan for v in per_x]
                hi = [max(v) if v else math.nan for v in per_x]
                ax.fill_between(pos, lo, hi, color=colour[s], alpha=0.18, linewidth=0)
                ax.errorbar(pos, med, yerr=[[m - l for m, l in zip(med, lo)], [h - m for m, h in zip(med, hi)]],
                            color=colour[s], linestyle=style, marker="o", markersize=4, capsize=2,
                            elinewidth=0.8, label=label)
            if kind == "ratio":
                ax.axhline(1.0, color="black", linewidth=1)
                for t in targets:
                    if (t["figure"], t["mpi"], t["pattern"]) == (figure, mpi, pattern):
                        ax.axhline(t["bound"], color=colour.get(t["series"], "grey"), linestyle="--",
                                   linewidth=1.3, label=f"target {target_text(t)}")
            if spec["ylog"] and kind == "value":
                ax.set_yscale("log")
            elif kind == "value" and ax.has_data():
                ax.set_ylim(bottom=0)  # a linear time axis from 0 shows relative costs honestly
            ax.set_xticks(*x_ticks(xs, pos, spec["xlog2"]))
            if spec["xlog2"] and xs and xs[0] == 0 and len(xs) > 1:
                ax.axvline((pos[0] + pos[1]) / 2, color="grey", linewidth=0.6, linestyle=":")
            ax.set_xlabel(spec["xlabel"])
            ax.grid(True, which="major", alpha=0.3)
            if pattern != "-":
                ax.set_title(PATTERN_TITLES.get(pattern, pattern))
            if not ax.has_data():
                ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", color="grey")
            # Ratios spanning more than 5x (e.g. a serialising variant) read better on a log axis.
            if kind == "ratio" and ax.has_data() and spread(ratios, mpi) > 5:
                ax.set_yscale("log")
        axes[0][0].set_ylabel(f"{spec['what']} ({spec['unit']})" if kind == "value"
                              else "ratio to baseline (paired per rep)")
        handles = {}
        for ax in axes[0]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(l, h)
        # series first, target lines last
        handles = dict(sorted(handles.items(), key=lambda kv: kv[0].startswith("target ")))
        fig.suptitle(title if kind == "value" else f"{figure} — ratio to baseline, {MPI_NAMES.get(mpi, mpi)}"
                     f" (median of paired ratios, band = min–max over reps)", fontsize=13)
        # as many legend columns as the longest label lets fit across the figure
        width = fig.get_figwidth() * 100
        ncol = max(1, min(4, len(handles), int(width // (7 * max(map(len, handles), default=1) + 60))))
        fig.legend(list(handles.values()), list(handles.keys()), loc="lower center",
                   ncol=ncol, fontsize=10, frameon=False)
        rows = math.ceil(len(handles) / ncol)
        fig.tight_layout(rect=(0, 0.05 + 0.045 * rows, 1, 0.95))
        suffix = "" if kind == "value" else "-ratio"
        fig.savefig(os.path.join(out_dir, f"{figure}-{mpi}{suffix}.png"), dpi=100)
        plt.close(fig)

    draw("value")
    draw("ratio")


def spread(ratios, mpi):
    """max/min over all ratios of one MPI; 1 when a ratio is 0 (which a log axis cannot show)."""
    values = [r for k, v in ratios.items() if k[0] == mpi for r in v]
    return max(values) / min(values) if values and min(values) > 0 else 1.0


def x_positions(xs, log2):
    """log2 positions; a 0 goes one step left of the smallest positive size."""
    if not log2:
        return list(xs)
    logs = [math.log2(x) for x in xs if x > 0]
    return [math.log2(x) if x > 0 else (min(logs) if logs else 0) - 1.5 for x in xs]


def x_ticks(xs, pos, log2):
    """Every size labelled when few, else every other (the 0 and the ends always)."""
    if not log2:
        return list(pos), [str(x) for x in xs]
    step = 1 if len(xs) <= 12 else 2
    keep = [i for i in range(len(xs)) if xs[i] == 0 or i % step == 0 or i == len(xs) - 1]
    return [pos[i] for i in keep], [fmt_x(xs[i]) for i in keep]


def write_summary(out_dir, results, target_rows, images):
    md = ["# tsmpi benchmark summary", "",
          f"Generated {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} from `{os.path.abspath(out_dir)}`.",
          "", "Ratios are series/baseline paired within a rep; per point the median over reps; "
          "targets are judged on the geometric mean over all sizes of the per-point medians.", "",
          "## Targets", "",
          "| MPI | figure | pattern | series | baseline | target | geomean ratio | worst point | result |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in target_rows:
        worst = "n/a" if t["worst"] is None else f"x={t['worst'][0]}: {fmt_ratio(t['worst'][1])}"
        at = at_text(t.get("at"))
        md.append(f"| {t['mpi']} | {t['figure']} | {t['pattern']} | {t['series']} | {t['baseline']} | "
                  f"{OPS[t['op']][0]} {t['bound']:.2f}{at} | {fmt_ratio(t['geomean'])} | {worst} | {result_text(t)} |")
    mpis = ordered({m for r in results.values() for m in r[2]["mpis"]}, MPI_ORDER)
    for mpi in mpis:
        md += ["", f"## {MPI_NAMES.get(mpi, mpi)} ({mpi})"]
        for figure, (points, ratios, layout) in results.items():
            if mpi not in layout["mpis"]:
                continue
            spec = FIGURES[figure]
            md += ["", f"### {figure}: {spec['what']} ({spec['unit']}, {spec['better']} is better)", ""]
            md += "\n\n".join(f"![]({img})" for img in images.get((figure, mpi), [])).split("\n")
            fm_rows = []
            for pattern in layout["patterns"]:
                series = [s for s in layout["series"] if any(k[:3] == (mpi, pattern, s) for k in points)]
                if not series:
                    continue
                pairs = [(s, b) for s, b in layout["pairs"] if s in series]
                if pattern != "-":
                    md += ["", f"#### pattern {pattern}"]
                xname = spec.get("xname", "processes" if figure == "commdup" else "size (B)")
                md += ["", "| " + " | ".join([xname] + [f"{s} ({spec['unit']})" for s in series]
                                              + [f"{s}/{b}" for s, b in pairs]) + " |",
                       "|" + " ---: |" * (1 + len(series) + len(pairs))]
                for x in layout["xs"]:
                    if not any((mpi, pattern, s, x) in points for s in series):
                        continue
                    cells = [fmt_value(median_or_none(points.get((mpi, pattern, s, x), {}).get("values", [])),
                                       spec["unit"]) for s in series]
                    cells += [fmt_ratio(median_or_none(ratios.get((mpi, pattern, s, b, x), []))) for s, b in pairs]
                    md.append("| " + " | ".join([str(x)] + cells) + " |")
                for s in series:
                    fms = [p["fm"] for k, p in points.items() if k[:3] == (mpi, pattern, s) and p["fm"] is not None]
                    if fms:
                        fm_rows.append(f"| {pattern} | {s} | {sum(fms)} |")
            if fm_rows:
                md += ["", "False matches (messages a thread received other than the one it probed), "
                       "total over sizes and reps:", "", "| pattern | series | false matches |",
                       "| --- | --- | ---: |"] + fm_rows
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def import_pyplot(argv):
    """Debian's python3-matplotlib is installed for /usr/bin/python3; a python3 found first on
    PATH (pyenv, a venv) may lack it, so rerun under the system interpreter once."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
                and not os.environ.get("BENCH_REPORT_REEXEC"):
            os.environ["BENCH_REPORT_REEXEC"] = "1"
            sys.stdout.flush()
            os.execv(system, [system, os.path.abspath(__file__)] + argv[1:])
        sys.exit("bench_report: matplotlib is missing (Debian package python3-matplotlib)")
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    return plt


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: bench_report.py RESULTS_DIR", file=sys.stderr)
        return 2
    plt = import_pyplot(argv)
    out_dir = argv[1]
    results = {}  # figure -> (points, ratios, layout), in FIGURES order
    try:
        for figure in FIGURES:
            path = os.path.join(out_dir, f"{figure}.csv")
            if os.path.exists(path):
                results[figure] = summarise(figure, *read_figure(path, figure))
    except InputError as e:
        print(f"bench_report: malformed input: {e}", file=sys.stderr)
        return 1
    mpis_seen = ordered({m for r in results.values() for m in r[2]["mpis"]}, MPI_ORDER)
    target_rows = evaluate_targets(results, mpis_seen)

    images = {}
    for figure, (points, ratios, layout) in results.items():
        write_points(out_dir, figure, points, ratios, layout)
        for mpi in layout["mpis"]:
            plot_figure(out_dir, figure, mpi, points, ratios, layout, target_rows, plt)
            images[(figure, mpi)] = [f"{figure}-{mpi}.png", f"{figure}-{mpi}-ratio.png"]
    write_summary(out_dir, results, target_rows, images)

    for t in target_rows:
        worst = "" if t["worst"] is None else f" (worst x={t['worst'][0]}: {fmt_ratio(t['worst'][1])})"
        print(f"target {t['mpi']} {t['figure']} {t['pattern']} {target_text(t)}: "
              f"geomean {fmt_ratio(t['geomean'])}{worst} {result_text(t)}")
    print(f"bench_report: wrote {os.path.join(out_dir, 'summary.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
