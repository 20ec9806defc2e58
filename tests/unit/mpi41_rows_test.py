#!/usr/bin/env python3
"""The table's rows for MPI 4.1's functions against their prototypes: the generator runs on this
MPI's mpi.h plus MPI 4.1's declarations (fixtures/mpi41/mpi41_decls.h), with the library's real
exports plus those functions, as an MPI >= 4.1 would give it. It must accept every row (handles
agree with the prototypes, counterparts exist) and derive the serialize strategy the row implies.
usage: mpi41_rows_test.py MPI CLANG PMPI_EXPORTS OUTDIR [-I... -D...]"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
fixtures = os.path.join(here, "fixtures", "mpi41")
mpi, clang, exports, outdir = sys.argv[1:5]
cflags = sys.argv[5:]
os.makedirs(outdir, exist_ok=True)

decls = open(os.path.join(fixtures, "mpi41_decls.h"), encoding="utf-8").read()
names = re.findall(r"TSMPI_MPI41_BOTH\(int, (\w+),", decls)
# The session functions exist only where mpi.h has MPI_Session (MPI >= 4.0).
has_session = subprocess.run([clang, "-fsyntax-only", "-x", "c", "-", *cflags], input="#include <mpi.h>\nMPI_Session s;\n",
                             capture_output=True, text=True).returncode == 0
names = [n for n in names if has_session or not n.startswith("Session_")]

combined = os.path.join(outdir, "exports.txt")
with open(combined, "w", encoding="utf-8") as out:
    out.write(open(exports, encoding="utf-8").read())
    for n in names:
        out.write(f"0000000000000000 T PMPI_{n}\n")
run = subprocess.run([sys.executable, os.path.join(root, "codegen", "generate.py"),
                      "--table", os.path.join(root, "codegen", "mpi_functions.table"), "--mpi", mpi,
                      "--clang", clang, "--header", os.path.join(fixtures, "include_mpi41.c"),
                      "--cflag=-I" + fixtures, *[f"--cflag={f}" for f in cflags],
                      "--ast", os.path.join(outdir, "ast.json"), "--exports", combined,
                      "--outdir", os.path.join(outdir, "generated"), "--chunks", "2"],
                     capture_output=True, text=True)
failures = []
if run.returncode != 0:
    failures.append("the generator refused the MPI 4.1 rows:\n" + run.stderr)
else:
    table = open(os.path.join(outdir, "generated", "function_table.cpp"), encoding="utf-8").read()
    expected = {
        "Remove_error_class": "kLocked", "Status_get_source": "kUnlocked", "Status_set_error": "kUnlocked",
        "Request_get_status_any": "kLocked", "Request_get_status_all": "kLocked", "Request_get_status_some": "kLocked",
        "Type_get_value_index": "kLocked", "Get_hw_resource_info": "kLocked", "Comm_attach_buffer": "kLocked",
        "Comm_detach_buffer": "kBlockingLocked", "Comm_detach_buffer_c": "kBlockingLocked",
        "Buffer_flush": "kStartWait", "Buffer_iflush": "kLocked", "Comm_flush_buffer": "kStartWait",
        "Comm_iflush_buffer": "kLocked",
    }
    if has_session:
        expected.update({"Session_flush_buffer": "kStartWait", "Session_detach_buffer": "kBlockingLocked"})
    for n in names:
        m = re.search(r'\{"MPI_' + n + r'", [^\n]*Strategy::(\w+), (true|false), [^\n]*"(.*)", (?:true|false), "[^"]*"\},\n', table)
        if not m:
            failures.append(f"MPI_{n} has no entry in the function table")
            continue
        if m.group(3):
            failures.append(f"MPI_{n} was derived ({m.group(3)}), not taken from its row")
        if n in expected and m.group(1) != expected[n]:
            failures.append(f"MPI_{n}: serialize strategy {m.group(1)}, expected {expected[n]}")
        if n.startswith("Request_get_status_") and m.group(2) != "true":
            failures.append(f"MPI_{n} does not go through the probe policies' look-through")
for f in failures:
    print("FAILED:", f)
print(f"mpi41_rows: {len(names)} MPI 4.1 functions, {len(failures)} failures")
sys.exit(1 if failures else 0)
