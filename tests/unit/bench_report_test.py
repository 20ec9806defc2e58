#!/usr/bin/env python3
"""scripts/lib/bench_report.py on synthetic CSVs whose medians and ratios are known by
construction. Run: python3 tests/unit/bench_report_test.py"""
import csv
import math
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "lib", "bench_report.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
sys.dont_write_bytecode = True  # no __pycache__ left in scripts/lib
import bench_report  # noqa: E402  (formatting helpers; matplotlib is imported only by main)

HEADER = "mpi,figure,series,pattern,x,rep,value,false_matches"

# Baselines differ a lot between reps, and the factors are not in rep order, so the median of
# paired ratios (1.03 at x=0) differs from the ratio of the medians (20.4/20 = 1.02).
BASE = [10.0, 20.0, 40.0]  # native-multiple per rep, times SCALE[x]
SCALE = {0: 1.0, 8: 1.0, 1024: 2.0}
PASSTHROUGH = {0: [1.10, 1.02, 1.03], 8: [1.04, 1.04, 1.04], 1024: [1.06, 1.00, 1.20]}
SERIALIZE = {0: [1.25, 1.20, 1.10], 8: [1.20, 1.20, 1.20], 1024: [1.30, 1.30, 1.30]}  # / native-single


def overhead_rows():
    rows = []
    for x in (0, 8, 1024):
        for rep in (1, 2, 3):
            b = BASE[rep - 1] * SCALE[x]
            single = 0.8 * b
            rows += [("openmpi", "native-single", x, rep, single),
                     ("openmpi", "native-multiple", x, rep, b),
                     ("openmpi", "tsmpi-passthrough", x, rep, b * PASSTHROUGH[x][rep - 1]),
                     ("openmpi", "tsmpi-serialize", x, rep, single * SERIALIZE[x][rep - 1]),
                     # one failed rep at x=8, every rep failed at x=1024
                     ("openmpi", "tsmpi-default", x, rep,
                      "NA" if (x, rep) == (8, 2) or x == 1024 else b * 1.5),
                     ("openmpi", "tsmpi-extra", x, rep, b * 2.0),  # unknown series: appended
                     ("mpich", "native-single", x, rep, 5.0),
                     ("mpich", "native-multiple", x, rep, 6.0)]
    return [f"{m},overhead,{s},-,{x},{rep},{v}," for m, s, x, rep, v in rows]


M = [1e6, 2e6, 4e6]  # native-mprobe msg/s per rep
MPROBE = {"directed": [0.97, 0.99, 0.90], "any": [0.90, 0.90, 0.90]}


def msgrate_rows():
    rows = []
    for pattern in ("directed", "any"):
        for x in (1, 64):
            for rep in (1, 2, 3):
                m = M[rep - 1]
                rows += [("native-probe", pattern, x, rep, m * 1.1, 5 if pattern == "directed" else 0),
                         ("native-mprobe", pattern, x, rep, m, 0),
                         ("tsmpi-mprobe", pattern, x, rep, m * MPROBE[pattern][rep - 1], 0)]
                if pattern == "directed":
                    # geomean sqrt(0.5 * 0.8) = 0.632, where an arithmetic mean would give 0.650
                    rows += [("tsmpi-helper", pattern, x, rep, m * (0.5 if x == 1 else 0.8), 0),
                             ("tsmpi-serialize", pattern, x, rep, m * 1.0, 0)]
    return [f"openmpi,msgrate,{s},{p},{x},{rep},{v},{fm}" for s, p, x, rep, v, fm in rows]


def commdup_rows():
    rows = []
    for x in (2, 4):
        for rep, single in ((1, 10.0), (2, 12.0)):
            rows += [("native-single", x, rep, single), ("native-multi1", x, rep, 2 * single),
                     ("tsmpi-serialize-multi1", x, rep, 3 * single)]
    return [f"openmpi,commdup,{s},-,{x},{rep},{v}," for s, x, rep, v in rows]


# Threads as ranks: thread-ranks = procs-native * factor, procs-tsmpi = procs-native * 1.25.
TC_LATENCY = {0: 0.3, 8: 0.4, 1024: 0.9}  # the target is at 8 B only: 0.400, not the geomean
TC_BANDWIDTH = {8: 0.5, 1 << 20: 1.2}      # at 1 MiB only: 1.200
TC_BARRIER = {2: 0.2, 4: 0.8}              # over the ranks: sqrt(0.16) = 0.400


def threadcomm_rows(figure, factors, pattern="-"):
    rows = []
    for x, f in factors.items():
        for rep in (1, 2, 3):
            b = BASE[rep - 1]
            rows += [("procs-native", x, rep, b), ("procs-tsmpi", x, rep, 1.25 * b),
                     ("thread-ranks", x, rep, f * b)]
    return [f"openmpi,{figure},{s},{pattern},{x},{rep},{v}," for s, x, rep, v in rows]


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(results_dir):
    return subprocess.run([sys.executable, SCRIPT, results_dir], capture_output=True, text=True)


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        write(os.path.join(d, "overhead.csv"), [HEADER] + overhead_rows())
        write(os.path.join(d, "msgrate.csv"), [HEADER] + msgrate_rows())
        write(os.path.join(d, "commdup.csv"), [HEADER] + commdup_rows())
        # The hardware floor at 8 B: half the processes' latency.
        floor = [f"openmpi,threadcomm,cache-line-floor,-,8,{rep},{0.5 * BASE[rep - 1]}," for rep in (1, 2, 3)]
        write(os.path.join(d, "threadcomm.csv"), [HEADER] + threadcomm_rows("threadcomm", TC_LATENCY) + floor)
        write(os.path.join(d, "threadcomm_bw.csv"), [HEADER] + threadcomm_rows("threadcomm_bw", TC_BANDWIDTH))
        write(os.path.join(d, "threadcomm_coll.csv"),
              [HEADER] + threadcomm_rows("threadcomm_coll", TC_BARRIER, "barrier"))
        # no rtt.csv: skipped
        cls.proc = run(d)
        if cls.proc.returncode != 0:
            raise AssertionError(f"bench_report failed:\n{cls.proc.stdout}\n{cls.proc.stderr}")
        with open(os.path.join(d, "summary.md")) as f:
            cls.md = f.read()
        cls.targets = {}
        in_targets = False
        for line in cls.md.splitlines():
            if line.startswith("## "):
                in_targets = line == "## Targets"
            cells = [c.strip() for c in line.strip("|").split("|")]
            if in_targets and line.startswith("| ") and len(cells) == 9 \
                    and cells[0] not in ("MPI", "---"):
                cls.targets[tuple(cells[:5])] = cells[5:]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def points(self, figure):
        with open(os.path.join(self.dir, f"{figure}-points.csv"), newline="") as f:
            return list(csv.DictReader(f))

    def point(self, figure, **want):
        rows = [r for r in self.points(figure) if all(r[k] == str(v) for k, v in want.items())]
        self.assertEqual(len(rows), 1, f"{figure} {want}: {rows}")
        return rows[0]

    def target(self, *key):
        self.assertIn(key, self.targets, f"targets table: {sorted(self.targets)}")
        return self.targets[key]

    def test_paired_ratio_per_point(self):
        r = self.point("overhead", mpi="openmpi", series="tsmpi-passthrough", x=0)
        self.assertEqual(r["reps"], "3")
        self.assertEqual(r["baseline"], "native-multiple")
        self.assertAlmostEqual(float(r["median"]), 20.4)  # 11, 20.4, 41.2
        self.assertAlmostEqual(float(r["ratio_median"]), 1.03)  # paired, not 20.4/20
        self.assertAlmostEqual(float(r["ratio_min"]), 1.02)
        self.assertAlmostEqual(float(r["ratio_max"]), 1.10)
        r = self.point("overhead", mpi="openmpi", series="tsmpi-passthrough", x=1024)
        self.assertAlmostEqual(float(r["median"]), 40.0)  # 21.2, 40, 96
        self.assertAlmostEqual(float(r["ratio_median"]), 1.06)

    def test_two_baselines_two_rows(self):
        rows = [r for r in self.points("overhead")
                if (r["mpi"], r["series"], r["x"]) == ("openmpi", "tsmpi-serialize", "0")]
        by_base = {r["baseline"]: float(r["ratio_median"]) for r in rows}
        self.assertEqual(sorted(by_base), ["native-multiple", "native-single"])
        self.assertAlmostEqual(by_base["native-single"], 1.20)
        self.assertAlmostEqual(by_base["native-multiple"], 0.96)  # 0.8 * 1.20
        # a baseline itself has one row without ratio
        r = self.point("overhead", mpi="openmpi", series="native-multiple", x=8)
        self.assertEqual((r["baseline"], r["ratio_median"]), ("", ""))
        # the unknown tsmpi-* series is compared to native-multiple too
        r = self.point("overhead", mpi="openmpi", series="tsmpi-extra", x=8)
        self.assertAlmostEqual(float(r["ratio_median"]), 2.0)

    def test_na_values(self):
        r = self.point("overhead", mpi="openmpi", series="tsmpi-default", x=8)
        self.assertEqual(r["reps"], "2")
        self.assertAlmostEqual(float(r["median"]), 1.5 * 25.0)  # median of 15 and 60
        self.assertAlmostEqual(float(r["ratio_median"]), 1.5)
        r = self.point("overhead", mpi="openmpi", series="tsmpi-default", x=1024)
        self.assertEqual((r["reps"], r["median"], r["ratio_median"]), ("0", "", ""))
        # table row x=1024: native-single 32.00, native-multiple 40.00, passthrough 42.40, ...
        row = next(l for l in self.md.splitlines() if l.startswith("| 1024 |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(cells[:3], ["1024", "32.00", "40.00"])
        self.assertIn("n/a", cells)

    def test_targets(self):
        gm = (1.03 * 1.04 * 1.06) ** (1 / 3)
        self.assertEqual(f"{gm:.3f}", "1.043")
        self.assertEqual(self.target("openmpi", "overhead", "-", "tsmpi-passthrough", "native-multiple"),
                         ["≤ 1.05", "1.043", "x=1024: 1.060", "✔ met"])
        self.assertEqual(self.target("openmpi", "overhead", "-", "tsmpi-serialize", "native-single"),
                         ["≤ 1.05", f"{(1.2 * 1.2 * 1.3) ** (1 / 3):.3f}", "x=1024: 1.300", "✘ missed"])
        self.assertEqual(self.target("openmpi", "msgrate", "directed", "tsmpi-mprobe", "native-mprobe"),
                         ["≥ 0.95", "0.970", "x=1: 0.970", "✔ met"])
        self.assertEqual(self.target("openmpi", "msgrate", "any", "tsmpi-mprobe", "native-mprobe")[1:],
                         ["0.900", "x=1: 0.900", "✘ missed"])
        self.assertEqual(self.target("openmpi", "msgrate", "directed", "tsmpi-helper", "native-mprobe")[1:],
                         ["0.632", "x=1: 0.500", "✘ missed"])
        self.assertEqual(self.target("openmpi", "msgrate", "directed", "tsmpi-serialize", "native-mprobe")[1:],
                         ["1.000", "x=1: 1.000", "✔ met"])
        for key in [("openmpi", "msgrate", "directed", "tsmpi-lock2d", "native-mprobe"),
                    ("openmpi", "msgrate", "any", "tsmpi-serialize", "native-mprobe"),
                    ("mpich", "overhead", "-", "tsmpi-passthrough", "native-multiple"),
                    ("mpich", "msgrate", "directed", "tsmpi-mprobe", "native-mprobe")]:
            self.assertEqual(self.target(*key)[1:], ["n/a", "n/a", "not measured"], key)
        # the serialize msgrate target is for Open MPI only
        self.assertNotIn(("mpich", "msgrate", "directed", "tsmpi-serialize", "native-mprobe"), self.targets)
        # overhead (pass-through, serialize, checking), overhead_f (pass-through), msgrate (mprobe
        # both patterns, lock2d, helper, checking any/any), serialize msgrate (Open MPI, both
        # patterns), scaling (4 series x 2 patterns), threadcomm (latency, bandwidth, message rate,
        # 3 small collectives)
        self.assertEqual(len(self.targets), 2 * 3 + 2 * 1 + 2 * (2 + 1 + 1 + 1) + 2 + 2 * 8 + 2 * (1 + 1 + 1 + 3))
        # checking mode's ping-pong target covers the sizes up to 1 KiB only
        self.assertEqual(self.target("openmpi", "overhead", "-", "tsmpi-check", "native-multiple")[0], "≤ 1.30 for x ≤ 1024")
        # one stdout line per target
        lines = [l for l in self.proc.stdout.splitlines() if l.startswith("target ")]
        self.assertEqual(len(lines), len(self.targets))
        self.assertIn("target openmpi overhead - tsmpi-passthrough/native-multiple ≤ 1.05: "
                      "geomean 1.043 (worst x=1024: 1.060) ✔ met", lines)

    def test_threadcomm(self):
        # point targets: the ratio at that size alone
        self.assertEqual(self.target("openmpi", "threadcomm", "-", "thread-ranks", "procs-native"),
                         ["≤ 0.50 at x=8", "0.400", "x=8: 0.400", "✔ met"])
        self.assertEqual(self.target("openmpi", "threadcomm_bw", "-", "thread-ranks", "procs-native"),
                         ["≥ 1.50 at x=1048576", "1.200", "x=1048576: 1.200", "✘ missed"])
        self.assertEqual(self.target("openmpi", "threadcomm_coll", "barrier", "thread-ranks", "procs-native"),
                         ["≤ 1.00", "0.400", "x=4: 0.800", "✔ met"])
        self.assertEqual(self.target("openmpi", "threadcomm_msgrate", "-", "thread-ranks", "procs-native")[1:],
                         ["n/a", "n/a", "not measured"])
        self.assertEqual(self.target("openmpi", "threadcomm_coll", "bcast-8", "thread-ranks", "procs-native")[1:],
                         ["n/a", "n/a", "not measured"])
        # ratios to both process baselines, and the tsmpi processes to the native ones
        # (the floor, measured at 8 B only, gives no ratio at 0 B)
        rows = {r["baseline"]: float(r["ratio_median"]) for r in self.points("threadcomm")
                if (r["series"], r["x"]) == ("thread-ranks", "0") and r["ratio_median"]}
        self.assertEqual(sorted(rows), ["procs-native", "procs-tsmpi"])
        self.assertAlmostEqual(rows["procs-native"], 0.3)
        # against the hardware floor, where it was measured (8 B): 0.4 / 0.5
        floor = {(r["series"], r["baseline"]): float(r["ratio_median"]) for r in self.points("threadcomm")
                 if r["x"] == "8" and r["baseline"] == "cache-line-floor"}
        self.assertAlmostEqual(floor[("thread-ranks", "cache-line-floor")], 0.8)
        self.assertAlmostEqual(floor[("procs-native", "cache-line-floor")], 2.0)
        self.assertAlmostEqual(rows["procs-tsmpi"], 0.24)
        self.assertAlmostEqual(float(self.point("threadcomm_coll", series="procs-tsmpi", x=2)["ratio_median"]), 1.25)
        self.assertIn("| ranks | thread-ranks (µs) | procs-tsmpi (µs) | procs-native (µs) |", self.md)
        for name in ["threadcomm-openmpi", "threadcomm-openmpi-ratio", "threadcomm_bw-openmpi",
                     "threadcomm_coll-openmpi-ratio"]:
            self.assertIn(f"![]({name}.png)", self.md)
            self.assertTrue(os.path.getsize(os.path.join(self.dir, f"{name}.png")) > 1000, name)

    def test_msgrate_tables_and_false_matches(self):
        r = self.point("msgrate", mpi="openmpi", series="native-probe", pattern="directed", x=1)
        self.assertEqual(r["false_matches_total"], "15")
        self.assertAlmostEqual(float(r["ratio_median"]), 1.1)
        r = self.point("msgrate", mpi="openmpi", series="tsmpi-mprobe", pattern="directed", x=64)
        self.assertAlmostEqual(float(r["median"]), 1.98e6)
        self.assertIn("| directed | native-probe | 30 |", self.md)
        self.assertIn("| any | native-probe | 0 |", self.md)
        # x=1 directed: native-probe 2.20 M, native-mprobe 2.00 M, tsmpi-mprobe 1.98 M
        self.assertRegex(self.md, r"\| 1 \| 2\.20 M \| 2\.00 M \| 1\.98 M \| 1\.00 M \| 2\.00 M \| 1\.100 \| 0\.970 \|")

    def test_commdup(self):
        r = self.point("commdup", series="tsmpi-serialize-multi1", x=4)
        self.assertEqual(r["baseline"], "native-multi1")
        self.assertAlmostEqual(float(r["ratio_median"]), 1.5)
        r = self.point("commdup", series="native-multi1", x=2)
        self.assertEqual(r["baseline"], "native-single")
        self.assertAlmostEqual(float(r["ratio_median"]), 2.0)
        self.assertAlmostEqual(float(r["median"]), 22.0)

    def test_images(self):
        for name in ["overhead-openmpi", "overhead-mpich", "msgrate-openmpi", "commdup-openmpi"]:
            for suffix in ("", "-ratio"):
                path = os.path.join(self.dir, f"{name}{suffix}.png")
                self.assertTrue(os.path.exists(path) and os.path.getsize(path) > 1000, path)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
                self.assertIn(f"![]({name}{suffix}.png)", self.md)
        for absent in ["rtt-openmpi.png", "msgrate-mpich.png", "rtt-points.csv"]:
            self.assertFalse(os.path.exists(os.path.join(self.dir, absent)), absent)


class Formatting(unittest.TestCase):
    def test_rates(self):
        self.assertEqual(bench_report.fmt_value(999999, "msg/s"), "1.00 M")
        self.assertEqual(bench_report.fmt_value(1234.5, "msg/s"), "1.23 k")
        self.assertEqual(bench_report.fmt_value(45600, "msg/s"), "45.6 k")
        self.assertEqual(bench_report.fmt_value(512, "msg/s"), "512")
        self.assertEqual(bench_report.fmt_value(3.14159, "µs"), "3.14")
        self.assertEqual(bench_report.fmt_value(None, "µs"), "n/a")
        self.assertTrue(math.isclose(bench_report.geomean([2.0, 8.0]), 4.0))


class Malformed(unittest.TestCase):
    def check(self, lines, expect):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "overhead.csv"), lines)
            proc = run(d)
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn(os.path.join(d, "overhead.csv") + expect, proc.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "summary.md")))

    def test_missing_column(self):
        self.check(["mpi,figure,series,pattern,x,rep,value", "openmpi,overhead,native-single,-,0,1,1.0"],
                   ":1: header lacks column(s) false_matches")

    def test_non_numeric_x(self):
        self.check([HEADER, "openmpi,overhead,native-single,-,0,1,1.0,", "openmpi,overhead,native-single,-,4k,1,1.0,"],
                   ":3: x '4k' is not an integer")


if __name__ == "__main__":
    unittest.main()
