"""Which C functions each exported Fortran routine of an MPI's Fortran libraries calls.

The Fortran bindings of an MPI are thin: `mpi_recv_` converts its arguments and calls the C
`MPI_Recv` (MPICH's mpif.h binding: resolved by the dynamic linker, so it reaches tsmpi) or
`PMPI_Recv` (Open MPI, MPICH's mpi_f08: it bypasses tsmpi unless redirected). Some routines
call neither (Open MPI's attribute calls go to `ompi_attr_get_aint`). This module reads the
libraries' machine code (`objdump -d`) and dynamic symbols (`nm -D`), builds the call graph
across the libraries (direct calls and tail jumps, local functions included), and returns for
every exported routine the dynamic symbols it reaches.
"""
import bisect
import collections
import re
import subprocess

CALL = re.compile(r"\s*([0-9a-f]+):\s+(call|jmp)\w*\s+([0-9a-f]+) <([^>]+)>")


def _defined_functions(nm, lib):
    """address -> names of the library's exported functions."""
    out = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    funcs = collections.defaultdict(set)
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TtWi":
            funcs[int(p[0], 16)].add(p[2].split("@")[0])
    return funcs


def analyze(libs, objdump="objdump", nm="nm"):
    """Returns (routines, owner): routines maps each exported function name of `libs` to the
    set of dynamic symbols it reaches; owner maps it to the library that defines it."""
    nodes = {}      # (lib, addr) -> names
    calls = collections.defaultdict(set)
    owner = {}
    for lib in libs:
        funcs = _defined_functions(nm, lib)
        dis = subprocess.run([objdump, "-d", "--no-show-raw-insn", lib],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        starts = set(funcs)
        parsed = []
        for line in dis:
            m = CALL.match(line)
            if not m:
                continue
            src, kind, tgt, label = int(m.group(1), 16), m.group(2), int(m.group(3), 16), m.group(4)
            parsed.append((src, tgt, label))
            # A call into the middle of nothing exported is a local function: a node of its own.
            if kind == "call" and "@plt" not in label:
                starts.add(tgt)
        order = sorted(starts)
        for a in order:
            nodes[(lib, a)] = funcs.get(a, set())
            for n in funcs.get(a, ()):
                owner.setdefault(n, lib)
        for src, tgt, label in parsed:
            i = bisect.bisect_right(order, src) - 1
            if i < 0:
                continue
            here = (lib, order[i])
            if "@plt" in label:
                calls[here].add(label.split("@")[0])
            elif tgt in starts and tgt != order[i]:
                calls[here].add((lib, tgt))
    by_name = {}
    for key, names in nodes.items():
        for n in names:
            by_name.setdefault(n, key)

    memo = {}

    def reach(key):
        if key in memo:
            return memo[key]
        memo[key] = set()  # cycles: what is known so far
        seen, todo, found = {key}, [key], set()
        while todo:
            k = todo.pop()
            for c in calls.get(k, ()):
                if isinstance(c, str):
                    found.add(c)
                    c = by_name.get(c)  # a symbol of another Fortran library: follow it
                    if c is None:
                        continue
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        memo[key] = found
        return found

    routines = {}
    for key, names in nodes.items():
        for n in names:
            routines[n] = reach(key)
    return routines, owner


def soname(lib, objdump="objdump"):
    out = subprocess.run([objdump, "-p", lib], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^\s*SONAME\s+(\S+)", out, re.M)
    return m.group(1) if m else lib.rsplit("/", 1)[-1]
