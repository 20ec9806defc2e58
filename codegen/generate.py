#!/usr/bin/env python3
"""Generate tsmpi's MPI wrappers from the classification table and the MPI's own mpi.h.

Inputs: the table (codegen/mpi_functions.table), clang's JSON AST dump of a file that includes
the selected MPI's mpi.h, and the PMPI symbols its library exports (`nm -D --defined-only`).
Outputs (build tree): fn_ids.h, function_table.cpp, wrappers_<n>.cpp.
Exits non-zero with one line per problem when the three inputs disagree.
"""
import argparse
import json
import os
import re
import subprocess
import sys

CATEGORIES = ["None", "AccessOnly", "UpdateRef", "CommIO", "Collective",
              "ReadList", "UpdateList", "Allocate", "Own", "Other"]
FAMILIES = ["-", "init", "finalize", "threadlevel", "abort", "send", "recv", "sendrecv",
            "probe", "mprobe", "mrecv", "wait", "test", "start", "cancel", "bsend", "buffer"]
# Families carried out by hand-written handlers (src/wrappers/handlers.h).
HANDLED_FAMILIES = {"init", "finalize", "threadlevel"}
# Receive-side families the probe policies see (src/matching/handlers.h, one template per
# function named without MPI_ and _c). mrecv is absent: a matched message is the application's.
MATCHED_FAMILIES = {"probe", "mprobe", "recv", "sendrecv", "start", "wait", "test", "cancel"}
MATCHED_FUNCTIONS = {"MPI_Request_free"}


def matched(name, row):
    return row["family"] in MATCHED_FAMILIES or name in MATCHED_FUNCTIONS


def matched_handler(name):
    base = name.split("_", 1)[1]  # MPI_Recv -> Recv, MPIX_Stream_recv -> Stream_recv
    return base[:-2] if base.endswith("_c") else base
KINDS = ["Comm", "Group", "Datatype", "Op", "Errhandler", "Info", "Win", "File",
         "Request", "Message", "Session", "Stream"]  # Stream: MPICH's MPIX_Stream
OBJECT_KINDS = KINDS + ["Keyval"]
HANDLE_FORMS = ["", "*", "&", "[]", "[]*", "[]&"]
COLUMNS = ["function", "category", "blocking", "nonblocking", "family", "objects", "handles", "ignored", "threadcomm"]
# What a call does when a handle argument belongs to a thread-rank communicator (src/ranks/):
# engine: carried out by the thread-rank engine (a template in src/ranks/calls.h named without
# MPI_ and _c); complete: a request completion, start or free, carried out by the engine's
# completion loop when the calling thread is a thread-rank; refuse: MPI_ERR_UNSUPPORTED_OPERATION
# through the error handler; record: makes an object with C callbacks (a communicator error
# handler, an attribute keyval) that the engine keeps, whatever the options, so that it can hand
# them a thread-rank communicator (src/ranks/callbacks.h, a template named without MPI_);
# -: no communicator, group or message argument.
THREADCOMM = {"engine": "kEngine", "complete": "kComplete", "refuse": "kRefuse", "record": "kRecord", "-": "kNone"}
# The `ignored` column: when the standard says arguments are not significant. Each condition
# names the argument that decides it (root, local_leader, or the buffer of inplace(...)).
IGNORED_CONDITIONS = {"nonroot": "root", "nonleaf": "root", "procnull": "root", "nonleader": "local_leader"}
# Where a wrapper calls the MPI's own function through tsmpi code that adds what no MPI has
# (instead of PMPI_<name>), src/ranks/native_calls.h: MPIX_COMM_TYPE_ADDRESS_SPACE on the MPI's
# communicators; the strings of error codes tsmpi made.
NATIVE_CALLS = {"MPI_Comm_split_type": "tsmpi::ranks::native_comm_split_type",
                "MPI_Error_string": "tsmpi::ranks::error_string",
                "MPI_Abort": "tsmpi::abort_job",  # never returns (src/runtime/abort_job.h)
                # Fortran integers of the thread-rank engine's handles (src/ranks/fortran_handles.cpp).
                "MPI_Comm_f2c": "tsmpi::ranks::comm_f2c", "MPI_Group_f2c": "tsmpi::ranks::group_f2c",
                "MPI_Message_f2c": "tsmpi::ranks::message_f2c",
                # its "thread_level" is the application's (src/runtime/init_finalize.cpp)
                "MPI_Info_create_env": "tsmpi::handlers::info_create_env",
                # Names set and read atomically where the MPI does not (src/locking/object_names.h).
                **{f"MPI_{k}_{op}_name": f"tsmpi::object_names::{k.lower()}_{op}_name"
                   for k in ("Comm", "Type", "Win") for op in ("set", "get")}}
# Parameter names of an MPI's mpi.h that differ from the standard's (Open MPI's MPI_Intercomm_create).
PARAMETER_ALIASES = {"bridge_comm": "peer_comm"}


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, msg):
        self.lines.append(msg)

    def fail_if_any(self, what):
        if self.lines:
            for line in self.lines:
                print(f"tsmpi codegen: {line}", file=sys.stderr)
            print(f"tsmpi codegen: {len(self.lines)} problem(s) {what}", file=sys.stderr)
            sys.exit(1)


def read_table(path, problems):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            cols = line.split()
            where = f"{os.path.basename(path)}:{lineno}"
            if len(cols) != len(COLUMNS):
                problems.add(f"{where}: expected {len(COLUMNS)} columns ({' '.join(COLUMNS)}), got {len(cols)}")
                continue
            row = dict(zip(COLUMNS, cols))
            name = row["function"]
            if not re.fullmatch(r"MPIX?_[A-Za-z0-9_]+", name):
                problems.add(f"{where}: bad function name {name}")
            if name in rows:
                problems.add(f"{where}: {name} classified twice")
            if row["category"] not in CATEGORIES:
                problems.add(f"{where}: {name}: unknown category {row['category']} (allowed: {' '.join(CATEGORIES)})")
            if row["blocking"] not in ("yes", "no"):
                problems.add(f"{where}: {name}: blocking must be yes or no")
            if row["family"] not in FAMILIES:
                problems.add(f"{where}: {name}: unknown family {row['family']} (allowed: {' '.join(FAMILIES)})")
            if row["threadcomm"] not in THREADCOMM:
                problems.add(f"{where}: {name}: unknown threadcomm value {row['threadcomm']} (allowed: {' '.join(THREADCOMM)})")
            row["objects_list"] = [] if row["objects"] == "-" else row["objects"].split(",")
            for obj in row["objects_list"]:
                verb, _, kind = obj.partition(":")
                if verb not in ("new", "free") or kind not in OBJECT_KINDS:
                    problems.add(f"{where}: {name}: bad objects entry {obj} (new:Kind or free:Kind)")
            row["handles_list"] = [] if row["handles"] == "-" else row["handles"].split(",")
            for h in row["handles_list"]:
                kind, form = split_handle(h)
                if kind not in KINDS or form not in HANDLE_FORMS:
                    problems.add(f"{where}: {name}: bad handle {h} (Kind, Kind*, Kind&, Kind[], Kind[]*, Kind[]&)")
            row["ignored_list"] = parse_ignored(row["ignored"], f"{where}: {name}", problems)
            # Every call that takes a communicator, group or message says what it does with a
            # thread-rank one: none may pass such a handle on to the MPI unseen.
            # The engine's requests likewise (a request it reads: not an output form).
            kinds = {split_handle(h)[0] for h in row["handles_list"]}
            if any(split_handle(h)[0] == "Request" and split_handle(h)[1] in ("", "&", "[]", "[]&")
                   for h in row["handles_list"]):
                kinds.add("input Request")
            engine_kinds = kinds & {"Comm", "Group", "Message", "input Request"}
            if row["threadcomm"] == "-" and engine_kinds:
                problems.add(f"{where}: {name}: takes a {'/'.join(sorted(engine_kinds))} "
                             f"handle, so its threadcomm column must be engine, complete or refuse")
            row["line"] = where
            rows[name] = row
    for name, row in rows.items():
        nb = row["nonblocking"]
        if nb != "-" and nb not in rows:
            problems.add(f"{row['line']}: {name}: nonblocking counterpart {nb} has no row")
    return rows


def parse_ignored(column, where, problems):
    """[(condition, operand, [parameter names])] from "nonroot:recvbuf+recvtype,inplace(sendbuf):sendtype"."""
    if column == "-":
        return []
    groups = []
    for group in column.split(","):
        cond, _, params = group.partition(":")
        m = re.fullmatch(r"inplace\((\w+)\)", cond)
        if m:
            cond, operand = "inplace", m.group(1)
        elif cond in IGNORED_CONDITIONS:
            operand = IGNORED_CONDITIONS[cond]
        else:
            problems.add(f"{where}: bad ignored condition {cond} (allowed: {', '.join(IGNORED_CONDITIONS)}, inplace(buffer))")
            continue
        names = [n for n in params.split("+") if n]
        if not names:
            problems.add(f"{where}: ignored condition {cond} lists no parameters")
        groups.append((cond, operand, names))
    return groups


def standard_names(params):
    return [PARAMETER_ALIASES.get(n, n) for _, n in params]


def check_ignored(row, params, problems):
    """Every parameter the `ignored` column names exists, and so does what decides it."""
    names = standard_names(params)
    for cond, operand, listed in row["ignored_list"]:
        for n in [operand] + listed:
            if n not in names:
                problems.add(f"{row['line']}: {row['function']}: ignored column names {n}, which mpi.h's prototype "
                             f"({', '.join(names)}) does not have")


def split_handle(h):
    m = re.fullmatch(r"([A-Za-z]+)(.*)", h)
    return (m.group(1), m.group(2)) if m else (h, "?")


def read_prototypes(path):
    """Map PMPI name -> (return type, [(param type, param name)], variadic)."""
    text = open(path, encoding="utf-8").read()
    decoder = json.JSONDecoder()
    protos = {}
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        if not text.startswith("{", i):  # "Dumping X:" lines of older clang versions
            i = text.find("\n", i) + 1 or len(text)
            continue
        node, i = decoder.raw_decode(text, i)
        if node.get("kind") != "FunctionDecl":
            continue
        name = node["name"]
        if not re.fullmatch(r"PMPIX?_[A-Za-z0-9_]+", name):
            continue
        fn_type = node["type"]["qualType"]
        ret = fn_type[: fn_type.index("(")].strip()
        params = [(p["type"]["qualType"], p.get("name", ""))
                  for p in node.get("inner", []) if p.get("kind") == "ParmVarDecl"]
        protos.setdefault(name, (ret, params, bool(node.get("variadic"))))
    return protos


def read_exports(path):
    names = set()
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if len(parts) >= 3 and parts[1] in ("T", "W", "i") and re.fullmatch(r"PMPIX?_[A-Za-z0-9_]+", parts[2]):
            names.add(parts[2])
    return names


HANDLE_TYPE = re.compile(r"^(const\s+)?MPIX?_(" + "|".join(KINDS) + r")\s*(\*?)\s*(const)?$")


def handle_params(params):
    """The handle parameters of a prototype as (kind, is_pointer)."""
    found = []
    for ptype, _ in params:
        m = HANDLE_TYPE.match(ptype.strip())
        if m:
            found.append((m.group(2), m.group(3) == "*"))
    return found


def check_handles(row, params, problems):
    declared = [split_handle(h) for h in row["handles_list"]]
    actual = handle_params(params)
    if len(declared) != len(actual):
        problems.add(f"{row['line']}: {row['function']}: table lists {len(declared)} handle parameter(s) "
                     f"({row['handles']}), mpi.h has {len(actual)} "
                     f"({','.join(k + ('*' if p else '') for k, p in actual) or '-'})")
        return
    for (kind, form), (akind, apointer) in zip(declared, actual):
        if kind != akind or (form != "") != apointer:
            problems.add(f"{row['line']}: {row['function']}: handle {kind}{form} does not match "
                         f"mpi.h's MPI_{akind}{' *' if apointer else ''}")


def cxx_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--table", required=True)
    ap.add_argument("--ast", help="clang -Xclang -ast-dump=json output for mpi.h (read, or written with --clang)")
    ap.add_argument("--exports", help="nm -D --defined-only output of the MPI library (read, or written with --library)")
    ap.add_argument("--clang", help="clang to run on --header to make --ast")
    ap.add_argument("--header", help="a C file that includes mpi.h")
    ap.add_argument("--cflag", action="append", default=[], help="-I/-D flag for clang (repeatable)")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--library", help="the MPI library whose exports to list into --exports")
    ap.add_argument("--mpi", required=True, help="openmpi or mpich")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--fortran-library", action="append", default=[],
                    help="a Fortran library of the MPI whose routines must reach tsmpi (repeatable)")
    ap.add_argument("--fortran-only", help="codegen/fortran_only.table")
    ap.add_argument("--objdump", default="objdump")
    ap.add_argument("--unknown-functions", choices=("stop", "warn"), default="stop",
                    help="an exported function without a row: stop naming it (default), or classify it by "
                         "the table's written rules, wrap it conservatively and warn")
    args = ap.parse_args()

    if args.clang:
        dump = subprocess.run([args.clang, "-fsyntax-only", "-Xclang", "-ast-dump=json",
                               "-Xclang", "-ast-dump-filter=PMPI", *args.cflag, args.header],
                              capture_output=True, text=True)
        if dump.returncode != 0:
            sys.exit(f"tsmpi codegen: clang could not parse mpi.h:\n{dump.stderr}")
        os.makedirs(os.path.dirname(os.path.abspath(args.ast)), exist_ok=True)
        write_if_changed(args.ast, dump.stdout)
    if args.library:
        listing = subprocess.run([args.nm, "-D", "--defined-only", args.library],
                                 capture_output=True, text=True, check=True)
        write_if_changed(args.exports, listing.stdout)

    problems = Problems()
    table = read_table(args.table, problems)
    problems.fail_if_any("in the classification table")

    protos = read_prototypes(args.ast)
    exports = read_exports(args.exports)
    if not exports:
        problems.add(f"no PMPI_ symbols found in {args.exports}")
    derived = {}  # name -> the rule that classified a function the table lacks
    for pname in sorted(exports):
        name = pname[1:]
        if pname not in protos:
            problems.add(f"{args.mpi} exports {pname} but its mpi.h declares no prototype for it")
        elif name not in table and args.unknown_functions == "warn":
            table[name], derived[name] = derive_row(name, table, protos[pname][1], exports)
        elif name not in table:
            problems.add(f"{args.mpi} exports {pname} but {name} is not classified in {os.path.basename(args.table)} "
                         f"(add its row, or configure with -DTSMPI_UNKNOWN_FUNCTIONS=warn to wrap it conservatively)")
    problems.fail_if_any(f"between {args.mpi} and the table")
    for name in sorted(derived):
        row = table[name]
        print(f"tsmpi codegen: warning: {name} is not in {os.path.basename(args.table)}: classified {row['category']}, "
              f"blocking {row['blocking']}, family {row['family']}, handles {row['handles']}, threadcomm "
              f"{row['threadcomm']} ({derived[name]})", file=sys.stderr)

    functions = sorted((p[1:] for p in exports), key=str.lower)
    for name in functions:
        check_handles(table[name], protos["P" + name][1], problems)
        check_ignored(table[name], protos["P" + name][1], problems)
    problems.fail_if_any(f"in handle columns for {args.mpi}")

    os.makedirs(args.outdir, exist_ok=True)
    write_if_changed(os.path.join(args.outdir, "fn_ids.h"), emit_ids(functions, table, args.mpi))
    exported = {"P" + f for f in functions}
    strategies = {name: serial_strategy(table[name], protos, name, exported) for name in functions}
    write_if_changed(os.path.join(args.outdir, "function_table.cpp"),
                     emit_table(functions, table, strategies, derived, protos))
    per_chunk = (len(functions) + args.chunks - 1) // args.chunks
    for c in range(args.chunks):
        chunk = functions[c * per_chunk:(c + 1) * per_chunk]
        write_if_changed(os.path.join(args.outdir, f"wrappers_{c}.cpp"),
                         emit_wrappers(chunk, table, protos, strategies))
    emit_fortran(args, functions, table, protos, strategies, problems)


def emit_fortran(args, functions, table, protos, strategies, problems):
    """generated/fortran_{redirects,entries,routines}.cpp (codegen/fortran.py)."""
    import types
    import fortran
    import fortran_reach
    patterns = fortran.read_fortran_only(args.fortran_only, problems) if args.fortran_only else []
    routines, owner = fortran_reach.analyze(args.fortran_library, args.objdump, args.nm)
    sonames = {lib: fortran_reach.soname(lib, args.objdump) for lib in args.fortran_library}
    g = types.SimpleNamespace(HEADER=HEADER, HANDLE_TYPE=HANDLE_TYPE, norm_type=norm_type, object_args=object_args,
                              handle_args=handle_args, cxx_string=cxx_string, sonames=sonames,
                              unknown_functions=args.unknown_functions, NATIVE_CALLS=NATIVE_CALLS,
                              is_handle_conversion=is_handle_conversion)
    classified = fortran.classify(routines, owner, table, functions, protos, strategies, patterns, problems,
                                  args.mpi, g)
    problems.fail_if_any(f"between {args.mpi}'s Fortran libraries and the table")
    write_if_changed(os.path.join(args.outdir, "fortran_redirects.cpp"), fortran.emit_redirects(functions, table, protos, g))
    write_if_changed(os.path.join(args.outdir, "fortran_entries.cpp"),
                     fortran.emit_entries(classified, table, protos, strategies, g))
    write_if_changed(os.path.join(args.outdir, "fortran_routines.cpp"), fortran.emit_routines(classified, g))


def write_if_changed(path, text):
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


HEADER = "// Generated by codegen/generate.py from codegen/mpi_functions.table and mpi.h. Do not edit.\n"


def emit_ids(functions, table, mpi):
    out = [HEADER, "#pragma once\n#include <cstdint>\n\nnamespace tsmpi::fn {\n",
           f"inline constexpr const char* kBuiltFor = {cxx_string(mpi)};\n",
           f"inline constexpr std::uint16_t kCount = {len(functions)};\n",
           "enum Id : std::uint16_t {\n"]
    out += [f"  {name},\n" for name in functions]
    out.append("};\n}  // namespace tsmpi::fn\n")
    return "".join(out)


def emit_table(functions, table, strategies, derived, protos):
    index = {name: i for i, name in enumerate(functions)}
    out = [HEADER, '#include "runtime/function_table.h"\n\nnamespace tsmpi {\n',
           "const FunctionInfo kFunctions[fn::kCount] = {\n"]
    for name in functions:
        row = table[name]
        nb = row["nonblocking"]
        nb_id = index.get(nb, -1)
        out.append(
            f"  {{{cxx_string(name)}, Category::{row['category']}, {str(row['blocking'] == 'yes').lower()}, "
            f"{nb_id}, {cxx_string(nb)}, Family::k{row['family'].capitalize() if row['family'] != '-' else 'None'}, "
            f"{cxx_string(row['objects'])}, {cxx_string(row['handles'])}, "
            f"Strategy::{strategies[name][0]}, {str(matched(name, row)).lower()}, {cxx_string(row['ignored'])}, "
            f"ThreadRanks::{THREADCOMM[row['threadcomm']]}, {cxx_string(derived.get(name, ''))}, "
            f"{str(one_read_handle(name, row, protos['P' + name][1]) is not None).lower()}, "
            f"{cxx_string(NATIVE_CALLS.get(name, ''))}}},\n")
    out.append("};\n}  // namespace tsmpi\n")
    return "".join(out)


def norm_type(t):
    return re.sub(r"\s+", " ", t.strip())


def counterpart_shape(blocking, nonblocking):
    """How the nonblocking counterpart can carry out the blocking call:
    ("start", status_index): same parameters, the blocking one's trailing MPI_Status * replaced
        by a trailing MPI_Request * (MPI_Send -> MPI_Isend, MPI_Recv -> MPI_Irecv);
    ("poll", flag_index): the same parameters plus an int *flag (MPI_Wait -> MPI_Test, MPI_Probe ->
        MPI_Iprobe);
    ("same", None): identical parameters, done when *outcount != 0 (MPI_Waitsome -> MPI_Testsome);
    None when neither fits."""
    bp = [norm_type(t) for t, _ in blocking[1]]
    npar = [(norm_type(t), n) for t, n in nonblocking[1]]
    nt = [t for t, _ in npar]
    status_index = len(bp) - 1 if bp and bp[-1] == "MPI_Status *" else None
    core = bp[:-1] if status_index is not None else bp
    if nt and nt[-1] == "MPI_Request *" and nt[:-1] == core:
        return ("start", status_index)
    candidates = [i for i, t in enumerate(nt) if t == "int *" and nt[:i] + nt[i + 1:] == bp]
    if candidates:
        named = [i for i in candidates if "flag" in npar[i][1]]
        return ("poll", (named or candidates)[-1])
    if nt == bp:
        return ("same", None)
    return None


SERIAL_KINDS = ("Comm", "Win", "File")
# Collective over a group of the communicator argument only: admission on the whole
# communicator would wait for ranks that never call, so it is agreed among the group's members
# (docs/serialize-mode.md).
GROUP_COLLECTIVES = {"MPI_Comm_create_group"}


def object_args(row, params):
    """C++ for tsmpi::Objects: the communicator, window or file the call works on (admission,
    bookkeeping of ids) and the one it creates."""
    handles = [split_handle(h) for h in row["handles_list"]]
    handle_positions = [i for i, (t, _) in enumerate(params) if HANDLE_TYPE.match(norm_type(t))]
    in_ref = out_ref = None
    for (kind, form), pos in zip(handles, handle_positions):
        if kind not in SERIAL_KINDS:
            continue
        if in_ref is None and form == "":
            in_ref = f"tsmpi::ref<tsmpi::Kind::{kind}>(a{pos})"
        elif in_ref is None and form == "&":
            in_ref = f"tsmpi::ref<tsmpi::Kind::{kind}>(*a{pos})"
        elif out_ref is None and form == "*":
            out_ref = f"tsmpi::out<tsmpi::Kind::{kind}>(a{pos})"
    return in_ref, out_ref


USES = {"": "In", "*": "Out", "&": "InOut", "[]": "ArrayIn", "[]*": "ArrayOut", "[]&": "ArrayInOut"}
# Parameters giving the length of a handle array (Waitall's count, Testsome's incount,
# Type_get_contents' max_datatypes); arrays sized otherwise (Alltoallw: the communicator's size)
# are left unchecked.
ARRAY_COUNTS = ("count", "incount", "max_datatypes")


def handle_args(row, params):
    """C++ for tsmpi::CallArgs: every handle parameter with its use (object lifetime, checks),
    attribute keys (int keyval parameters), the source or dest argument (hang watchdog) and the
    message buffers (checks).
    Returns (declarations to put before the call, the CallArgs expression)."""
    handles = [split_handle(h) for h in row["handles_list"]]
    positions = [i for i, (t, _) in enumerate(params) if HANDLE_TYPE.match(norm_type(t))]
    # MPI_Type_get_contents_c's max_datatypes is an MPI_Count; a handle array is never that long.
    count = next((f"static_cast<int>(a{i})" for i, (t, n) in enumerate(params)
                  if n in ARRAY_COUNTS and norm_type(t) in ("int", "MPI_Count")), None)
    names = standard_names(params)
    entries = []
    root = None
    for (kind, form), pos in zip(handles, positions):
        where = f"(void*)&a{pos}" if form == "" else f"(void*)a{pos}"
        n = (count or "-1") if form.startswith("[]") else "1"
        ignored, in_place, decided_by = ignored_when(row, names, names[pos])
        entry = f"{{tsmpi::Kind::{kind}, tsmpi::Use::{USES[form]}, {where}, {n}"
        if ignored:
            entry += f", {ignored}, {in_place}"
            root = root or decided_by
        entries.append(entry + "}")
    for i, (t, n) in enumerate(params):
        if not n.endswith("keyval") or norm_type(t) not in ("int", "int *"):
            continue
        if norm_type(t) == "int":
            entries.append(f"{{tsmpi::Kind::Keyval, tsmpi::Use::In, (void*)&a{i}, 1}}")
        else:
            use = "Out" if "new:Keyval" in row["objects_list"] else "InOut"
            entries.append(f"{{tsmpi::Kind::Keyval, tsmpi::Use::{use}, (void*)a{i}, 1}}")
    peer = next((f"a{i}" for i, (t, n) in enumerate(params) if n in ("source", "dest") and norm_type(t) == "int"),
                "tsmpi::kNoPeer")
    buffers = message_buffers(row, params)
    decl = ""
    handles_expr, buffers_expr = "nullptr, 0", "nullptr, 0"
    if entries:
        decl += f"  const tsmpi::HandleArg handles[] = {{{', '.join(entries)}}};\n"
        handles_expr = f"handles, {len(entries)}"
    if buffers:
        decl += f"  const tsmpi::BufferArg buffers[] = {{{', '.join(buffers)}}};\n"
        buffers_expr = f"buffers, {len(buffers)}"
    tail = ""
    if root:
        # The root (or local leader) and the communicator it is a rank of decide the conditions.
        comm = next(f"a{i}" for i, (t, n) in enumerate(params)
                    if norm_type(t) == "MPI_Comm" and n in ("comm", "local_comm"))
        tail = f", a{names.index(root)}, {comm}"
    return decl, f"tsmpi::CallArgs{{{handles_expr}, {peer}, {buffers_expr}{tail}}}"


IGNORED_BITS = {"nonroot": "kNonRoot", "nonleader": "kNonRoot", "nonleaf": "kNonLeaf", "procnull": "kProcNull",
                "inplace": "kInPlace"}


def one_read_handle(name, row, params):
    """(kind, parameter index) of the one object a call reads, when object lifetime's fast read
    can be taken straight from the wrapper (kLifetimeRead, src/wrappers/lifetime_read.h): an
    Access Only or Read List call that does not block, names exactly one handle, a single one it
    only reads and that counts everywhere, and no attribute key; None otherwise."""
    if row["category"] not in ("AccessOnly", "ReadList") or row["blocking"] == "yes" or matched(name, row):
        return None
    if row["family"] in HANDLED_FAMILIES:
        return None
    handles = [split_handle(h) for h in row["handles_list"]]
    positions = [i for i, (t, _) in enumerate(params) if HANDLE_TYPE.match(norm_type(t))]
    if len(handles) != 1 or len(positions) != 1 or handles[0][1] != "":
        return None
    if any(n.endswith("keyval") and norm_type(t) in ("int", "int *") for t, n in params):
        return None
    names = standard_names(params)
    if ignored_when(row, names, names[positions[0]])[0]:
        return None
    return handles[0][0], positions[0]


def ignored_when(row, names, param):
    """C++ for the conditions under which handle parameter `param` is not significant: the
    tsmpi::Ignored bits, the in-place buffer they test, and the parameter that decides the root
    conditions ("root", "local_leader" or None)."""
    bits, in_place, decided_by = [], "nullptr", None
    for cond, operand, listed in row["ignored_list"]:
        if param not in listed:
            continue
        bits.append(f"tsmpi::Ignored::{IGNORED_BITS[cond]}")
        if cond == "inplace":
            in_place = f"a{names.index(operand)}"
        else:
            decided_by = operand
    return " | ".join(bits), in_place, decided_by


BUFFER_FAMILIES = {"send", "bsend", "recv", "sendrecv", "mrecv"}


def message_buffers(row, params):
    """The (buffer, count, datatype) triples of a point-to-point call that moves data now
    (persistent inits only describe a later transfer): TSMPI_CHECK's buffer conflicts."""
    if row["family"] not in BUFFER_FAMILIES or "new:Request" in row["objects_list"] and row["category"] == "Allocate":
        return []
    types = [norm_type(t) for t, _ in params]
    found = []
    for i in range(len(types) - 2):
        if types[i] in ("const void *", "void *") and types[i + 1] in ("int", "MPI_Count") and types[i + 2] == "MPI_Datatype":
            found.append(i)
    names = {n: f"a{i}" for i, (t, n) in enumerate(params) if norm_type(t) == "int"}
    out = []
    for n, i in enumerate(found):
        receive = row["family"] in ("recv", "mrecv") or (row["family"] == "sendrecv" and (n == 1 or len(found) == 1))
        # The rank the data goes to or comes from: MPI_PROC_NULL moves none.
        peer = names.get("source" if receive else "dest", "tsmpi::kNoPeer")
        out.append(f"{{a{i}, static_cast<long long>(a{i + 1}), a{i + 2}, {str(receive).lower()}, {peer}}}")
    return out


# Functions tsmpi defines itself, whatever the MPI exports: its thread-rank API
# (src/ranks/threadcomm_api.cpp), which forwards to the MPI's own where TSMPI_THREADCOMM=native.
# Their generated wrapper is named tsmpi_native_MPIX_X (not exported) for it to call.
DEFINED_BY_TSMPI = {"MPIX_Threadcomm_init", "MPIX_Threadcomm_start", "MPIX_Threadcomm_finish",
                    "MPIX_Threadcomm_free"}


# Calls serialize mode carries out by hand (src/locking): MPI_Waitall even though a polling form
# exists (waitall.cpp: MPICH 4.0.2's MPI_Testall mishandles persistent collective and partitioned
# requests); RMA synchronization that would wait for another process's application while
# holding the lock (rma_sync.cpp).
SERIAL_HANDLERS = {"MPI_Waitall", "MPI_Win_post", "MPI_Win_start", "MPI_Win_lock", "MPI_Win_unlock",
                   "MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Comm_free"}


# Calls that wait only for the other threads of the process (MPICH's MPIX_Threadcomm_start and
# finish, where every thread of a region arrives): under serialize mode's lock the first would
# wait for threads that need the lock to arrive.
THREAD_BARRIERS = {"MPIX_Threadcomm_start", "MPIX_Threadcomm_finish"}


# Functions with nothing to protect by the standard or by their name: the tools information
# interface (MPI-4.0 §15.3: thread-safe) and the language and integer handle conversions.
UNPROTECTED_PREFIXES = ("MPI_T_", "MPIX_T_")
UNPROTECTED_SUFFIXES = ("_c2f", "_f2c", "_c2f08", "_f082c", "_f082f", "_f2f08", "_toint", "_fromint")

# The conversions of a handle between C and Fortran (not of a status): nothing to protect at
# MPI_THREAD_MULTIPLE, but Open MPI's read and extend its handle tables, which lock only there,
# so serialize mode takes its lock for them (src/locking/handle_conversion.h).
HANDLE_CONVERSION = re.compile(r"^MPIX?_(" + "|".join("Type" if k == "Datatype" else k for k in KINDS) + r")_(c2f|f2c)$")


def is_handle_conversion(name):
    return HANDLE_CONVERSION.match(name) is not None


def derive_row(name, table, params, exports):
    """A row for an exported function the table lacks (--unknown-functions warn), by the table's
    written rules where the name and prototype decide them; otherwise conservative: category
    Other, so serialize mode calls it under its lock and no other protection applies (no object
    lifetime, checking mode or probe policy), refused on a thread-rank communicator. Returns
    (row, the rule used)."""
    handles = [kind + ("*" if pointer else "") for kind, pointer in handle_params(params)]
    row = {"function": name, "category": "Other", "blocking": "no", "nonblocking": "-", "family": "-",
           "objects": "-", "handles": ",".join(handles) or "-", "ignored": "-", "threadcomm": "-",
           "line": "derived"}
    rule = "conservative: serialized, no other protection"
    base = name[:-2] if name.endswith("_c") else None
    if base and base in table and "derived" not in table[base]["line"]:
        # The large-count form of a classified function: the same row (MPI-4.0 §2.5.8).
        row.update({k: table[base][k] for k in ("category", "blocking", "family", "objects", "handles", "ignored",
                                                 "threadcomm")})
        nb = table[base]["nonblocking"]
        row["nonblocking"] = nb + "_c" if nb != "-" and ("P" + nb + "_c") in exports and nb + "_c" in table else "-"
        rule = f"the large-count form of {base}"
    else:
        if name.startswith(UNPROTECTED_PREFIXES) or name.endswith(UNPROTECTED_SUFFIXES):
            row["category"] = "None"
            rule = "tools interface or handle conversion: nothing to protect"
        if {k for k, _ in handle_params(params)} & {"Comm", "Group", "Message"}:
            row["threadcomm"] = "refuse"  # the thread-rank engine has no implementation of it
    row["handles_list"] = [] if row["handles"] == "-" else row["handles"].split(",")
    row["objects_list"] = [] if row["objects"] == "-" else row["objects"].split(",")
    row["ignored_list"] = [] if row["ignored"] == "-" else parse_ignored(row["ignored"], name, Problems())
    row["line"] = f"derived ({rule})"
    return row, rule


def serial_strategy(row, protos, name, exported):
    """What serialize mode does for the function (docs/serialize-mode.md)."""
    family, category = row["family"], row["category"]
    if family in HANDLED_FAMILIES:
        return "kRuntime", None
    if family == "abort":
        return "kUnlocked", None  # must work even while another thread holds the lock
    nb = row["nonblocking"]
    shape = None
    # Blocking file I/O is not turned into its MPI_File_i* form: Open MPI's MPI_File_sync fails
    # while any nonblocking I/O of the process is pending. Individual I/O waits only for the
    # disk and runs under the lock; collective I/O goes through admission.
    file_io = row["handles_list"][:1] == ["File"]
    # Blocking send-receive is carried out by tsmpi's own Irecv + Isend (src/locking/sendrecv.cpp):
    # Open MPI 4.1 has no MPI_Isendrecv, and MPICH 4.0.2's reports a stale count in its status.
    if family == "sendrecv" and row["blocking"] == "yes":
        return "kHandler", None
    if name in SERIAL_HANDLERS:
        return "kHandler", None
    if name in THREAD_BARRIERS:
        return "kUnlocked", None
    if nb != "-" and "P" + nb in exported and not file_io:
        shape = counterpart_shape(protos["P" + name], protos["P" + nb])
    in_ref, _ = object_args(row, protos["P" + name][1])
    if "new:Comm" in row["objects_list"]:
        # The MPI's context-id agreement couples every communicator creation of a process:
        # each one holds the process's right to enter until it has completed.
        if name in GROUP_COLLECTIVES:
            return "kAdmittedGroup", None
        if name == "MPI_Intercomm_create":
            return "kAdmittedBridge", None  # both groups take part, only one is the argument
        if not in_ref or not in_ref.startswith("tsmpi::ref<tsmpi::Kind::Comm>"):
            return "kOwnedLocked", None
        if row["blocking"] == "no":
            return "kCreationInFlight", None
        if shape and shape[0] == "start":
            return "kAdmittedStartWait", shape
        return "kAdmitted", None
    if row["blocking"] == "no":
        if category == "None" and family not in ("test", "wait") and not is_handle_conversion(name):
            return "kUnlocked", None
        if category == "Collective" and in_ref and in_ref.startswith("tsmpi::ref<tsmpi::Kind::Comm>") and \
                any(norm_type(t) == "MPI_Request *" for t, _ in protos["P" + name][1]):
            return "kSequenced", None  # ordered behind the communicator's pending constructors
        return "kLocked", None
    if shape:
        return {"start": "kStartWait", "poll": "kPoll", "same": "kPollSome"}[shape[0]], shape
    creates = any(o in ("new:Win", "new:File") for o in row["objects_list"])
    collective = category in ("Collective", "Own") or creates
    if collective and in_ref:
        return "kAdmitted", None  # needs a communicator, window or file to agree on
    return "kBlockingLocked", None


# Handles a call that serialize mode gives the MPI later must not read from the application's
# objects: the application may free a datatype or an info object once the call returned.
HELD_KINDS = ("Datatype", "Info")


def sequenced_extra(name, row, params, strategy):
    """C++ for a call serialize mode may give the MPI after it returned (kSequenced: a nonblocking
    collective; kCreationInFlight: a nonblocking constructor; src/locking/collective_sequence.h):
    tsmpi::Sequenced / SequencedCreation with the call's start capturing its arguments by value,
    its datatypes and info objects read through the copies `h` holds (by their index in CallArgs'
    handles), and its request (and new communicator) written where tsmpi says."""
    handles = [split_handle(h) for h in row["handles_list"]]
    positions = [i for i, (t, _) in enumerate(params) if HANDLE_TYPE.match(norm_type(t))]
    at = {pos: (index, kind, form) for index, ((kind, form), pos) in enumerate(zip(handles, positions))}
    args, held, request, newcomm = [], [], None, None
    for i, _ in enumerate(params):
        index, kind, form = at.get(i, (None, None, None))
        if kind == "Request" and form == "*":
            request = i
            args.append("r")
        elif kind == "Comm" and form == "*" and strategy == "kCreationInFlight":
            newcomm = i
            args.append("nc")
        elif kind in HELD_KINDS and form == "":
            args.append(f"h.get(a{i}, {len(held)})")
            held.append(str(index))
        else:
            args.append(f"a{i}")
    if request is None or (strategy == "kCreationInFlight" and newcomm is None) or len(held) > 4:
        raise SystemExit(f"generate.py: {name}: serialize mode cannot order this call (no request, no new "
                         f"communicator, or more than 4 datatypes and info objects)")
    call = f"P{name}({', '.join(args)})"
    indices = "{" + ", ".join(held) + "}"
    if strategy == "kSequenced":
        return (f"tsmpi::Sequenced{{[=](const tsmpi::serial::Held& h, MPI_Request* r) {{ return {call}; }}, "
                f"a{request}, std::array<std::int8_t, 4>{indices}, {len(held)}}}")
    return (f"tsmpi::SequencedCreation{{[=](const tsmpi::serial::Held& h, MPI_Comm* nc, MPI_Request* r) "
            f"{{ return {call}; }}, a{newcomm}, a{request}, std::array<std::int8_t, 4>{indices}, {len(held)}}}")


def emit_wrappers(functions, table, protos, strategies):
    out = [HEADER, '#include "wrappers/wrapper_prelude.h"\n\n']
    for name in functions:
        ret, params, variadic = protos["P" + name]
        row = table[name]
        decl = ", ".join(f"std::type_identity_t<{t}> a{i}" for i, (t, _) in enumerate(params))
        if variadic:
            decl += ", ..."  # forwarded without the variable part: both MPIs ignore it (MPI_Pcontrol)
        call_args = ", ".join(f"a{i}" for i in range(len(params)))
        pmpi = NATIVE_CALLS.get(name, "P" + name)
        wrapper = f"extern \"C\" TSMPI_EXPORT {ret} {name}({decl or 'void'}) {{\n"
        if name in DEFINED_BY_TSMPI:
            # The MPI's own, protected, for tsmpi's definition to call (TSMPI_THREADCOMM=native).
            wrapper = f"extern \"C\" {ret} tsmpi_native_{name}({decl or 'void'}) {{\n"
        if row["family"] in HANDLED_FAMILIES:
            out.append(f"{wrapper}  return tsmpi::handlers::{name}({call_args});\n}}\n\n")
            continue
        strategy, shape = strategies[name]
        in_ref, out_ref = object_args(row, params)
        objects = f"tsmpi::Objects{{{in_ref or 'tsmpi::HandleRef{}'}, {out_ref or 'tsmpi::OutRef{}'}}}"
        extra = "tsmpi::NoExtra{}"
        if strategy in ("kStartWait", "kAdmittedStartWait"):
            nb = "P" + row["nonblocking"]
            status_index = shape[1]
            start_args = [f"a{i}" for i in range(len(params)) if i != status_index] + ["r"]
            status = f"a{status_index}" if status_index is not None else "MPI_STATUS_IGNORE"
            extra = (f"tsmpi::StartWait{{[&](MPI_Request* r) {{ return {nb}({', '.join(start_args)}); }}, "
                     f"{status}}}")
        elif strategy == "kPoll":
            nb = "P" + row["nonblocking"]
            flag_index = shape[1]
            args = [f"a{i}" for i in range(len(params))]
            args.insert(flag_index, "flag")
            extra = f"tsmpi::Poll{{[&](int* flag) {{ return {nb}({', '.join(args)}); }}}}"
        elif strategy == "kPollSome":
            nb = "P" + row["nonblocking"]
            outcount = next(i for i, (t, n) in enumerate(params) if norm_type(t) == "int *")
            extra = f"tsmpi::PollSome{{[&]() {{ return {nb}({call_args}); }}, a{outcount}}}"
        elif strategy in ("kSequenced", "kCreationInFlight"):
            extra = sequenced_extra(name, row, params, strategy)
        elif strategy == "kAdmittedGroup":
            group = next(i for i, (t, n) in enumerate(params) if norm_type(t) == "MPI_Group")
            tag = next(i for i, (t, n) in enumerate(params) if n == "tag")
            extra = f"tsmpi::GroupArgs{{a{group}, a{tag}}}"
        elif strategy == "kAdmittedBridge":
            extra = "tsmpi::BridgeArgs{a1, a2, a3, a4}"  # local_leader, peer_comm, remote_leader, tag
        elif strategy == "kHandler":
            extra = f"tsmpi::Handler{{[&]() {{ return tsmpi::serial::{name}({call_args}); }}}}"
        if matched(name, row):
            extra += (f",\n      [&](auto& original) {{ return tsmpi::matching::{matched_handler(name)}("
                      f"original{', ' if call_args else ''}{call_args}); }}")
        elif row["threadcomm"] in ("engine", "complete", "refuse"):
            extra += ", tsmpi::Unmatched{}"
        if row["threadcomm"] in ("engine", "complete"):
            # Thread-rank communicators (src/ranks/calls.h): the engine carries the call out.
            extra += (f",\n      [&]() {{ return tsmpi::ranks::on::{matched_handler(name)}("
                      f"{call_args}); }}")
        elif row["threadcomm"] == "refuse":
            extra += ", tsmpi::ranks::Refused{}"
        # The hooked path is a function of its own, called with the arguments by value: were it
        # inlined, its lambdas (which capture the arguments by reference) would make the
        # wrapper spill every argument and set up a frame before the pass-through test.
        fixed = ", ".join(f"std::type_identity_t<{t}> a{i}" for i, (t, _) in enumerate(params))
        handle_decl, args = handle_args(row, params)
        hook_body = (f"{handle_decl}"
                     f"  return tsmpi::Hook<tsmpi::Category::{row['category']}, tsmpi::Strategy::{strategy}>::call(\n"
                     f"      tsmpi::fn::{name}, [&]() {{ return {pmpi}({call_args}); }},\n"
                     f"      {objects}, {args}, {extra});\n}}\n")
        comm_in = re.fullmatch(r"tsmpi::ref<tsmpi::Kind::Comm>\((a\d+)\)", in_ref or "")
        if row["threadcomm"] == "engine" and comm_in:
            # The engine's direct entry (wrappers/hook.h): a call on a thread-rank communicator
            # with nothing to record skips the argument tables, built for the protections. Those
            # and the hook are a function of their own, so that the direct entry does not pay
            # their frame (callgrind: about 50 of the wrapper's 100 instructions per MPI_Isend);
            # hooked_ stays on the stack of both paths (kept_frame), as reports name it.
            out.append(f"[[gnu::noinline]] static {ret} protected_{name}({fixed or 'void'}) {{\n{hook_body}")
            out.append(f"[[gnu::noinline]] static {ret} hooked_{name}({fixed or 'void'}) {{\n"
                       f"  if (TSMPI_UNLIKELY(tsmpi::ranks::live()) && tsmpi::direct_to_engine(tsmpi::handle_bits({comm_in.group(1)}))) {{\n"
                       f"    tsmpi::NestingScope inside(tsmpi::tl_thread);\n"
                       f"    return tsmpi::ranks::on::{matched_handler(name)}({call_args});\n  }}\n"
                       f"  return tsmpi::kept_frame(protected_{name}({call_args}));\n}}\n")
        else:
            out.append(f"[[gnu::noinline]] static {ret} hooked_{name}({fixed or 'void'}) {{\n{hook_body}")
        if matched(name, row):
            # Only the probe policy needs it (runtime/activation.h's kPolicyOnly): its handler,
            # without the hook (matching/policy_only.h).
            out.append(f"[[gnu::noinline]] static {ret} policy_{name}({fixed or 'void'}) {{\n"
                       f"  return tsmpi::matching::policy_only([&]() {{ return {pmpi}({call_args}); }},\n"
                       f"      [&](auto& original) {{ return tsmpi::matching::{matched_handler(name)}("
                       f"original{', ' if call_args else ''}{call_args}); }});\n}}\n")
            out.append(f"{wrapper}"
                       f"  const std::uint8_t mode = tsmpi::fn_mode(tsmpi::fn::{name});\n"
                       f"  if (TSMPI_LIKELY(mode == tsmpi::kPassThrough)) return {pmpi}({call_args});\n"
                       f"  if (mode == tsmpi::kPolicyOnly) return policy_{name}({call_args});\n"
                       f"  return hooked_{name}({call_args});\n}}\n\n")
            continue
        one = one_read_handle(name, row, params)
        if one:
            # Only object lifetime needs it (kLifetimeRead): its fast read with the one handle,
            # the hook for what that cannot settle (wrappers/lifetime_read.h).
            kind, pos = one
            out.append(f"[[gnu::noinline]] static {ret} read_{name}({fixed}) {{\n"
                       f"  return tsmpi::lifetime::read_one(tsmpi::Kind::{kind}, tsmpi::handle_bits(a{pos}),\n"
                       f"      [&]() {{ return {pmpi}({call_args}); }}, [&]() {{ return hooked_{name}({call_args}); }});\n}}\n")
            out.append(f"{wrapper}"
                       f"  const std::uint8_t mode = tsmpi::fn_mode(tsmpi::fn::{name});\n"
                       f"  if (TSMPI_LIKELY(mode == tsmpi::kPassThrough)) return {pmpi}({call_args});\n"
                       f"  if (mode == tsmpi::kLifetimeRead) return read_{name}({call_args});\n"
                       f"  return hooked_{name}({call_args});\n}}\n\n")
            continue
        if row["threadcomm"] == "record":
            # Seen in every mode: the call is rare, and a program makes its handlers and keyvals
            # before any thread-rank exists. The caller's address tells C from the MPI's Fortran.
            out.append(f"{wrapper}"
                       f"  return tsmpi::ranks::record::{name[4:]}(__builtin_return_address(0), [](auto... a) {{\n"
                       f"    if (TSMPI_LIKELY(tsmpi::pass_through(tsmpi::fn::{name}))) return {pmpi}(a...);\n"
                       f"    return hooked_{name}(a...);\n"
                       f"  }}, {call_args});\n}}\n\n")
            continue
        out.append(f"{wrapper}"
                   f"  if (TSMPI_LIKELY(tsmpi::pass_through(tsmpi::fn::{name}))) return {pmpi}({call_args});\n"
                   f"  return hooked_{name}({call_args});\n}}\n\n")
    return "".join(out)


if __name__ == "__main__":
    main()
