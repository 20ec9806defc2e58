#!/usr/bin/env python3
"""codegen/fortran.py on a stand-in Fortran library (fixtures/fortran/fake_fortran_binding.c):
each routine gets the path its machine code gives it, and an unknown routine stops the build.
usage: fortran_codegen_test.py [C_COMPILER]  (default cc)"""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
fixtures = os.path.join(here, "fixtures")
failures = []
compiler = sys.argv[1] if len(sys.argv) > 1 else "cc"


def check(cond, what):
    if not cond:
        failures.append(what)


def build(tmp, name, *defines):
    lib = os.path.join(tmp, name)
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", *defines, "-o", lib,
                    os.path.join(fixtures, "fortran", "fake_fortran_binding.c")], check=True)
    return lib


def generate(tmp, lib, outdir, table="table_ok.table", exports="mini_exports.txt"):
    return subprocess.run([sys.executable, os.path.join(root, "codegen", "generate.py"),
                           "--table", os.path.join(fixtures, table),
                           "--ast", os.path.join(fixtures, "mini_ast.json"),
                           "--exports", os.path.join(fixtures, exports),
                           "--mpi", "openmpi", "--chunks", "2", "--outdir", outdir,
                           "--fortran-library", lib,
                           "--fortran-only", os.path.join(fixtures, "fortran", "fortran_only.table")],
                          capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    ok = generate(tmp, build(tmp, "libfake_ok.so"), os.path.join(tmp, "ok"))
    check(ok.returncode == 0, f"generator failed on the known routines: {ok.stderr}")
    if ok.returncode == 0:
        read = lambda f: open(os.path.join(tmp, "ok", f), encoding="utf-8").read()
        routines, redirects, entries = read("fortran_routines.cpp"), read("fortran_redirects.cpp"), read("fortran_entries.cpp")
        check('{"mpi_send_", "MPI_Send", Binding::kMpifh, Path::kRedirected, false}' in routines, "mpi_send_ is not redirected")
        check('{"mpi_comm_dup_", "MPI_Comm_dup", Binding::kMpifh, Path::kC, false}' in routines,
              "mpi_comm_dup_ (through a local helper to MPI_Comm_dup) is not 'through C'")
        check('{"mpi_comm_dup__", "MPI_Comm_dup", Binding::kMpifh, Path::kEntry, false}' in routines,
              "mpi_comm_dup__ (reaching nothing) gets no entry point")
        check('{"mpi_wtime_", "MPI_Wtime", Binding::kMpifh, Path::kNone, false}' in routines, "mpi_wtime_ is not 'none'")
        check('{"mpi_sizeof_integer_", "-", Binding::kMpifh, Path::kNone, false}' in routines, "mpi_sizeof_integer_ is not Fortran-only")
        check('{"PMPI_Send", reinterpret_cast<void*>(&MPI_Send)}' in redirects, "PMPI_Send's slot is not redirected")
        check('"PMPI_Wtime"' not in redirects, "PMPI_Wtime (category None) is redirected")
        check('"libfake_ok.so"' in redirects, "the library's soname is not in kLibraries")
        check('extern "C" TSMPI_EXPORT void mpi_comm_dup__(void* f0, void* f1, MPI_Fint* ierr)' in entries,
              "no entry point mpi_comm_dup__")
        # tsmpi's f2c, which also knows the thread-rank engine's communicators (src/ranks/fortran_handles.cpp),
        # under serialize mode's lock (src/locking/handle_conversion.h).
        check("tsmpi::serial::locked_conversion([&] { return tsmpi::ranks::comm_f2c(*static_cast<MPI_Fint*>(f0)); })" in entries,
              "the entry point does not convert the handle with the locked f2c")
        check('"mpi_comm_dup_"' not in entries.replace('"mpi_comm_dup__"', ""), "mpi_comm_dup_ got an entry point too")
    # Request variables: a routine converting the request (Open MPI's bindings) gets an entry point
    # naming the program's variable for checking mode; one passing the variable itself does not.
    req = generate(tmp, build(tmp, "libfake_req.so", "-DWITH_REQUESTS"), os.path.join(tmp, "req"),
                   "table_counterparts.table", "exports_with_counterparts.txt")
    check(req.returncode == 0, f"generator failed on the request routines: {req.stderr}")
    if req.returncode == 0:
        read = lambda f: open(os.path.join(tmp, "req", f), encoding="utf-8").read()
        routines, entries = read("fortran_routines.cpp"), read("fortran_entries.cpp")
        check('{"mpi_wait_", "MPI_Wait", Binding::kMpifh, Path::kRedirected, true}' in routines,
              "mpi_wait_ (waiting on a copy of the request) is not marked as copying its request variable")
        check('{"mpi_test_", "MPI_Test", Binding::kMpifh, Path::kRedirected, false}' in routines,
              "mpi_test_ (testing the program's variable) is marked as copying it")
        check('extern "C" TSMPI_EXPORT void mpi_wait_(void* f0, void* f1, MPI_Fint* ierr)' in entries,
              "no request-variable entry point mpi_wait_")
        check("RequestVariableScope scope(tsmpi::fn::MPI_Wait, f0)" in entries,
              "mpi_wait_'s entry point does not name its request variable f0")
        check("void mpi_test_(" not in entries, "mpi_test_ got an entry point")
    bad = generate(tmp, build(tmp, "libfake_bad.so", "-DWITH_UNKNOWN_ROUTINE"), os.path.join(tmp, "bad"))
    check(bad.returncode != 0, "generator accepted a routine with no path")
    check("exports the Fortran routine mpi_mystery_, which has no row in mpi_functions.table and no entry in "
          "fortran_only.table" in bad.stderr, f"the failure does not name mpi_mystery_: {bad.stderr}")

for f in failures:
    print("FAIL:", f)
print("fortran_codegen_test:", "ok" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
