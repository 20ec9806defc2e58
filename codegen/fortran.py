"""Fortran: how each routine of the MPI's Fortran libraries reaches tsmpi, and the generated code.

Every exported Fortran routine (all manglings of mpif.h/`use mpi`, the `use mpi_f08` names)
takes one of these paths, decided from the libraries' call graph (fortran_reach.py):
  c           it calls the C MPI_X, which the dynamic linker binds to tsmpi's wrapper;
  redirected  it calls PMPI_X: at load time tsmpi points the library's PMPI_X slots at its own
              MPI_X (src/fortran/redirect.cpp), so the MPI's own binding converts the arguments
              and the call enters the same wrapper as a C call;
  entry       it reaches no C function of its own (Open MPI's and MPICH's attribute calls, Open
              MPI's keyval and error-handler constructors): tsmpi exports a generated entry point
              of the same name that runs the hook around the MPI's own routine;
  none        nothing to protect: table category None, or a Fortran-only routine listed in
              fortran_only.table (MPI_SIZEOF, predefined callbacks, ...).
Anything else fails the build, naming the routine.

A redirected routine whose function takes a request variable and whose machine code converts
requests (MPI_Request_f2c/c2f: Open MPI, where C handles are pointers) hands the C function a
copy of the program's INTEGER request; it also gets an entry point of its own name that only
tells checking mode where the program's variable is (src/fortran/request_variables.h) and calls
the MPI's routine.
"""
import fnmatch
import os
import re
import sys

PROFILING = re.compile(r"(?i)^pmpi")
# Strategies whose hooked path calls something other than the function itself (the
# nonblocking form, a poll loop, a hand-written handler): an entry point cannot forward those.
SUBSTITUTING = {"kStartWait", "kAdmittedStartWait", "kPoll", "kPollSome", "kCreationInFlight", "kSequenced",
                "kAdmittedGroup", "kAdmittedBridge", "kHandler", "kRuntime"}
STATUS_READING_FAMILIES = {"probe", "mprobe", "recv", "sendrecv", "start", "wait", "test", "cancel", "mrecv"}
SCALAR_TYPES = {"int", "MPI_Aint", "MPI_Count", "MPI_Offset", "MPI_Fint"}
# Attribute calls whose Fortran routine reaches no C function (the MPI's internals): on a
# thread-rank communicator their entry point hands the routine the MPI communicator that holds
# the thread-rank's attributes. Arguments (comm, keyval, ...).
ATTRIBUTE_CALLS = {"MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Attr_get", "MPI_Attr_put"}
# A binding that calls one of these converts between the program's INTEGER request and a C copy.
REQUEST_CONVERSIONS = {"PMPI_Request_f2c", "MPI_Request_f2c", "PMPI_Request_c2f", "MPI_Request_c2f"}


def read_fortran_only(path, problems):
    patterns = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            pattern, _, why = line.partition(" ")
            if not why.strip():
                problems.add(f"{os.path.basename(path)}:{lineno}: {pattern} needs a reason")
            patterns.append((pattern.lower(), why.strip()))
    return patterns


def c_function(name, table_lower):
    """The table function an exported Fortran routine binds, and its binding; (None, binding)
    when there is none. mpi_recv_, MPI_RECV, mpi_recv__ -> MPI_Recv; mpi_recv_f08ts_large_ ->
    MPI_Recv_c; Open MPI's MPI_Recv_f08, mpi_alloc_mem_cptr_ -> MPI_Recv, MPI_Alloc_mem."""
    n = name.lower().rstrip("_")
    binding = "f08" if "_f08" in n else "mpifh"
    candidates = [n]
    large = False
    stripped = True
    while stripped:
        stripped = False
        for suffix in ("_large", "_f08ts", "_f08", "_cptr", "_f"):
            if n.endswith(suffix):
                n = n[: -len(suffix)]
                large = large or suffix == "_large"
                candidates.append(n + ("_c" if large else ""))
                stripped = True
    # MPICH's Fortran names for some MPIX_ extensions drop the X (mpi_delete_error_class_f08_).
    candidates += ["mpix_" + c[len("mpi_"):] for c in candidates if c.startswith("mpi_")]
    for c in candidates:
        if c in table_lower:
            return table_lower[c], binding
    return None, binding


def fortran_only(name, patterns):
    n = name.lower().rstrip("_")
    return next((why for p, why in patterns if fnmatch.fnmatchcase(n, p)), None)


def classify(routines, owner, table, functions, protos, strategies, patterns, problems, mpi, g):
    """-> list of (routine, binding, function or None, path, library, request variable) for every
    exported, non-profiling routine (request variable: the parameter index of the request
    variable the binding copies, or None); problems for those with no path."""
    exported = set(functions)
    table_lower = {f.lower(): f for f in table}
    out = []

    def cannot(name, binding, fn, lib, why):
        """A routine with no path: the build stops, or with --unknown-functions warn the routine
        stays the MPI's own, unprotected, named in a warning and in tsmpi-info."""
        if g.unknown_functions == "warn":
            print(f"tsmpi codegen: warning: {why}; left unprotected", file=sys.stderr)
            out.append((name, binding, fn, "unprotected", lib, None))
        else:
            problems.add(why + " (configure with -DTSMPI_UNKNOWN_FUNCTIONS=warn to build with it unprotected)")
    for name in sorted(routines, key=lambda n: (n.lower(), n)):  # a total order: stable output
        if PROFILING.match(name) or not re.match(r"(?i)^mpix?_", name):
            continue
        fn, binding = c_function(name, table_lower)
        reached = routines[name]
        lib = owner[name]
        if fn is None:
            if fortran_only(name, patterns):
                out.append((name, binding, None, "none", lib, None))
            else:
                cannot(name, binding, None, lib, f"{mpi}'s {os.path.basename(lib)} exports the Fortran routine {name}, "
                       f"which has no row in mpi_functions.table and no entry in fortran_only.table")
            continue
        if fn in reached and fn in exported:
            path = "c"
        elif not has_work(table[fn], g):
            path = "none"
        elif "P" + fn in reached and fn in exported:
            path = "redirected"
        elif fn not in exported:
            problems.add(f"{mpi}'s Fortran routine {name} binds {fn}, which {mpi}'s C library does not export")
            continue
        else:
            why = unforwardable(table[fn], protos["P" + fn][1], strategies[fn], g.norm_type)
            if why:
                cannot(name, binding, fn, lib, f"{mpi}'s Fortran routine {name} reaches neither {fn} nor P{fn} "
                       f"(it calls {', '.join(sorted(reached)) or 'nothing exported'}) and "
                       f"cannot get an entry point: {why}")
                continue
            path = "entry"
        copied = None
        if path == "redirected" and reached & REQUEST_CONVERSIONS:
            copied = copied_request(table[fn], protos["P" + fn][1], g)
            if isinstance(copied, str):
                cannot(name, binding, fn, lib, f"{mpi}'s Fortran routine {name} copies the request variable of "
                       f"{fn}, which tsmpi cannot follow: {copied}")
                continue
        out.append((name, binding, fn, path, lib, copied))
    return out


def copied_request(row, params, g):
    """The parameter index of the function's request variable (a request it writes, or reads and
    writes: Request*, Request&, Request[]&, Request[]*), None if it has none; a string saying why
    an entry point cannot forward the routine's arguments."""
    positions = [i for i, (t, _) in enumerate(params) if g.HANDLE_TYPE.match(g.norm_type(t))]
    found = [pos for h, pos in zip(row["handles_list"], positions) if h.startswith("Request") and h != "Request"]
    if not found:
        return None
    if len(found) > 1:
        return "more than one request variable"
    if any("char" in g.norm_type(t) for t, _ in params):
        return "a character argument (hidden length)"
    return found[0]


def late_handle(row, params, strategy, g):
    """The parameter index of the new communicator a nonblocking constructor writes (serialize
    mode writes it after the call returned: src/locking/creation_in_flight.h), else None."""
    if strategy != "kCreationInFlight":
        return None
    positions = [i for i, (t, _) in enumerate(params) if g.HANDLE_TYPE.match(g.norm_type(t))]
    return next((pos for h, pos in zip(row["handles_list"], positions) if h == "Comm*"), None)


def has_work(row, g):
    """Whether a Fortran call of the function must reach tsmpi: it has something to protect, it
    is a thread-level query tsmpi answers, or tsmpi adds to what the MPI does. The others' PMPI_
    slots are left alone."""
    # MPI_X_c2f (category None) gives the thread-rank engine's handles Fortran integers, which
    # MPI_X_f2c (NATIVE_CALLS) converts back (src/ranks/fortran_handles.cpp).
    # The handle conversions the bindings make take serialize mode's lock
    # (src/locking/handle_conversion.h).
    return (row["category"] != "None" or row["family"] == "threadlevel" or row["threadcomm"] != "-"
            or row["function"] in g.NATIVE_CALLS or g.is_handle_conversion(row["function"]))


def unforwardable(row, params, strategy, norm_type):
    if row["family"] in ("init", "finalize", "threadlevel"):
        return "tsmpi's hand-written handler needs the C arguments"
    if strategy[0] in SUBSTITUTING:
        return f"serialize mode's strategy {strategy[0]} replaces the call"
    for t, n in params:
        t = norm_type(t)
        # A status is passed through to the MPI's routine untouched, unless a probe policy reads
        # it (the Fortran status is not a C MPI_Status, and MPI_STATUS_IGNORE differs).
        if "MPI_Status" in t and row["family"] in STATUS_READING_FAMILIES:
            return f"status argument {n}, which the probe policies read"
        if t.endswith("[]") or ("MPI_" in t and t.count("*") > 1):
            return f"array argument {n}"
    return None


def emit_entries(classified, table, protos, strategies, g):
    """Generated entry points for the routines on the `entry` path: one hooked body per
    function, shared by its manglings."""
    out = [g.HEADER, '#include "fortran/entry_point.h"\n#include "fortran/request_variables.h"\n'
           '#include "locking/handle_conversion.h"\n#include "wrappers/wrapper_prelude.h"\n\n']
    entries = [c for c in classified if c[3] == "entry"]
    done = set()
    for name, binding, fn, path, lib, _ in entries:
        params = protos["P" + fn][1]
        row = table[fn]
        nf = len(params)
        # Each character argument's length follows ierr, in order (gfortran passes a size_t;
        # Open MPI's C bindings read an int from the same slot).
        nlen = sum("char" in g.norm_type(t) for t, _ in params)
        fparams = ", ".join(f"void* f{i}" for i in range(nf))
        fargs = ", ".join(f"f{i}" for i in range(nf))
        lparams = "".join(f", std::size_t l{i}" for i in range(nlen))
        largs = "".join(f", l{i}" for i in range(nlen))
        sig = f"void (*)({', '.join(['void*'] * nf + ['MPI_Fint*'] + ['std::size_t'] * nlen)})"
        if fn not in done:
            done.add(fn)
            # The C view of each argument; handles converted with the MPI's f2c. The MPI's
            # Fortran routine uses what its f2c returns unchecked (Open MPI's f2c of a freed
            # index is a null pointer): an input handle that is no handle is refused here.
            conv, post, checks = [], [], []
            for i, (t, n) in enumerate(params):
                t = g.norm_type(t)
                m = g.HANDLE_TYPE.match(t)
                if m and not m.group(3):  # handle by value
                    conv.append(f"  [[maybe_unused]] {t} a{i} = {f2c(t, f'*static_cast<MPI_Fint*>(f{i})', g)};\n")
                    checks.append(
                        f"  if (tsmpi::handle_bits(a{i}) == 0) {{\n"
                        f"    const int rc = tsmpi::lifetime::refuse_not_a_handle(args, tsmpi::Kind::{m.group(2)});\n"
                        f"    if (ierr) *ierr = static_cast<MPI_Fint>(rc);\n    return;\n  }}\n")
                elif m:  # handle written by the call: its C form after the call
                    kind = f"MPI_{m.group(2)}"
                    conv.append(f"  {kind} c{i} = {null_handle(kind)};\n  {kind}* a{i} = &c{i};\n")
                    post.append(f"c{i} = {f2c(kind, f'*static_cast<MPI_Fint*>(f{i})', g)};")
                elif t in SCALAR_TYPES:
                    conv.append(f"  [[maybe_unused]] {t} a{i} = *static_cast<{t}*>(f{i});\n")
                else:  # pointers: the C view of the same memory (the protections read none)
                    conv.append(f"  [[maybe_unused]] auto a{i} = reinterpret_cast<{t}>(f{i});\n")
            in_ref, out_ref = g.object_args(row, params)
            objects = f"tsmpi::Objects{{{in_ref or 'tsmpi::HandleRef{}'}, {out_ref or 'tsmpi::OutRef{}'}}}"
            handle_decl, args = g.handle_args(row, params)
            holder = []
            if fn in ATTRIBUTE_CALLS and row["threadcomm"] == "engine":
                # A thread-rank's attributes live on an MPI communicator: the routine works there.
                holder.append(
                    f"  MPI_Fint holder;\n"
                    f"  if (int rc; tsmpi::ranks::attributes_in_fortran(tsmpi::fn::{fn}, &a0, a1, &rc)) {{\n"
                    f"    if (rc != MPI_SUCCESS) {{\n      if (ierr) *ierr = static_cast<MPI_Fint>(rc);\n      return;\n    }}\n"
                    f"    holder = {locked_conversion('MPI_Comm_c2f', 'a0', g)};\n    f0 = &holder;\n  }}\n")
            elif row["threadcomm"] in ("engine", "complete", "refuse"):
                # The MPI's routine would read the object behind an engine handle: refused.
                checks.append(f"  if (int rc; tsmpi::ranks::refuses_in_fortran(tsmpi::fn::{fn}, args, &rc)) {{\n"
                              f"    if (ierr) *ierr = static_cast<MPI_Fint>(rc);\n    return;\n  }}\n")
            after = f"\n        if (e == MPI_SUCCESS) {{ {' '.join(post)} }}" if post else ""
            out.append(
                f"// {fn} from Fortran: the MPI's routine does the conversions; the hook sees the C handles.\n"
                f"[[gnu::noinline]] static void fortran_{fn}({sig.replace('(*)', '(*original)')}, {fparams}, MPI_Fint* ierr{lparams}) {{\n"
                + "".join(conv) + handle_decl + f"  const tsmpi::CallArgs args = {args};\n" + "".join(holder + checks) +
                f"  int rc = tsmpi::Hook<tsmpi::Category::{row['category']}, tsmpi::Strategy::{strategies[fn][0]}>::call(\n"
                f"      tsmpi::fn::{fn}, [&]() -> int {{\n"
                f"        MPI_Fint e = MPI_SUCCESS;\n        original({fargs}, &e{largs});{after}\n"
                f"        return static_cast<int>(e);\n      }},\n"
                f"      {objects}, args, tsmpi::NoExtra{{}});\n"
                f"  if (ierr) *ierr = static_cast<MPI_Fint>(rc);\n}}\n\n")
        soname = g.sonames[lib]
        out.append(
            f"extern \"C\" TSMPI_EXPORT void {name}({fparams}, MPI_Fint* ierr{lparams}) {{\n"
            f"  static tsmpi::fortran::Original slot{{{g.cxx_string(soname)}, {g.cxx_string(name)}}};\n"
            f"  auto original = reinterpret_cast<{sig}>(slot.get());\n"
            f"  if (TSMPI_LIKELY(tsmpi::pass_through(tsmpi::fn::{fn}))) return original({fargs}, ierr{largs});\n"
            f"  fortran_{fn}(original, {fargs}, ierr{largs});\n}}\n\n")
    for name, binding, fn, path, lib, copied in classified:
        if copied is None:
            continue
        params = protos["P" + fn][1]
        nf = len(params)
        fparams = ", ".join(f"void* f{i}" for i in range(nf))
        fargs = ", ".join(f"f{i}" for i in range(nf))
        sig = f"void (*)({', '.join(['void*'] * nf + ['MPI_Fint*'])})"
        # A nonblocking constructor's binding copies newcomm too; serialize mode writes it late.
        late = late_handle(table[fn], params, strategies[fn][0], g)
        follow = "tsmpi::fortran::g_follow_request_variables"
        if late is not None:
            follow = f"({follow} || tsmpi::fortran::g_late_handles)"
        out.append(
            f"// {name}: the MPI's binding calls {fn} on a copy of the program's request variable f{copied}"
            + (f" and of its newcomm f{late}" if late is not None else "") + ".\n"
            f"extern \"C\" TSMPI_EXPORT void {name}({fparams}, MPI_Fint* ierr) {{\n"
            f"  static tsmpi::fortran::Original slot{{{g.cxx_string(g.sonames[lib])}, {g.cxx_string(name)}}};\n"
            f"  auto original = reinterpret_cast<{sig}>(slot.get());\n"
            f"  if (TSMPI_LIKELY(!{follow})) return original({fargs}, ierr);\n"
            f"  const tsmpi::fortran::RequestVariableScope scope(tsmpi::fn::{fn}, f{copied}"
            + (f", f{late}" if late is not None else "") + ");\n"
            f"  original({fargs}, ierr);\n}}\n\n")
    return "".join(out)


def locked_conversion(f, argument, g):
    """C++ for handle conversion f of `argument` under serialize mode's lock
    (src/locking/handle_conversion.h): tsmpi's where generate.py's NATIVE_CALLS has one (the
    kinds the thread-rank engine makes, whose handles it also knows), else the MPI's own (a
    macro on MPICH)."""
    return f"tsmpi::serial::locked_conversion([&] {{ return {g.NATIVE_CALLS.get(f, 'P' + f)}({argument}); }})"


def f2c(kind, argument, g):
    """The locked conversion of a Fortran handle (MPI_Type_f2c for MPI_Datatype)."""
    name = "Type" if kind == "MPI_Datatype" else kind[len("MPI_"):]
    return locked_conversion(f"MPI_{name}_f2c", argument, g)


def null_handle(kind):
    return {"MPI_Errhandler": "MPI_ERRHANDLER_NULL", "MPI_Datatype": "MPI_DATATYPE_NULL", "MPI_Comm": "MPI_COMM_NULL",
            "MPI_Group": "MPI_GROUP_NULL", "MPI_Op": "MPI_OP_NULL", "MPI_Info": "MPI_INFO_NULL",
            "MPI_Win": "MPI_WIN_NULL", "MPI_File": "MPI_FILE_NULL", "MPI_Request": "MPI_REQUEST_NULL",
            "MPI_Message": "MPI_MESSAGE_NULL", "MPI_Session": "MPI_SESSION_NULL", "MPI_Stream": "MPIX_STREAM_NULL"}[kind]


def emit_redirects(functions, table, protos, g):
    """The PMPI_ slots to point at tsmpi's wrappers and the libraries to patch (libtsmpi.so)."""
    redirected = [f for f in functions if has_work(table[f], g)]
    libs = sorted(set(g.sonames.values()))
    out = [g.HEADER, '#include "fortran/redirect.h"\n#include "locking/handle_conversion.h"\n'
           '#include "wrappers/wrapper_prelude.h"\n\n']
    for f in redirected:  # tsmpi's own definitions (generated wrappers, handlers)
        ret, params, variadic = protos["P" + f]
        decl = ", ".join(f"std::type_identity_t<{t}>" for t, _ in params) + (", ..." if variadic else "")
        out.append(f"extern \"C\" {ret} {f}({decl or 'void'});\n")
    # A conversion the binding makes around its call (Open MPI's bindings convert every handle)
    # is not a call of its own: it goes straight to the conversion (tsmpi's where it answers
    # them, MPI_Comm_f2c), under serialize mode's lock. MPI_Comm_c2f and the other conversions
    # the thread-rank engine answers take their wrapper.
    def target(f):
        row = table[f]
        if row["category"] == "None" and row["threadcomm"] == "-" and g.is_handle_conversion(f):
            return f"locked_{f}"
        return f
    out.append("\nnamespace tsmpi::fortran {\n\n")
    for f in redirected:
        if target(f) != f:
            ret, params, _ = protos["P" + f]
            out.append(f"static {ret} locked_{f}({params[0][0]} h) {{ return {locked_conversion(f, 'h', g)}; }}\n")
    out.append("\nconst Redirect kRedirects[] = {\n")
    out += [f"    {{\"P{f}\", reinterpret_cast<void*>(&{target(f)})}},\n" for f in redirected]
    out.append(f"}};\nconst std::size_t kRedirectCount = {len(redirected)};\n\n")
    # (an empty table keeps one element: C++ has no zero-length arrays)
    out.append("const char* const kLibraries[] = {" + (", ".join(g.cxx_string(s) for s in libs) or "nullptr") + "};\n")
    out.append(f"const std::size_t kLibraryCount = {len(libs)};\n\n}}  // namespace tsmpi::fortran\n")
    return "".join(out)


def emit_routines(classified, g):
    """How every exported routine reaches tsmpi (tsmpi-info, TSMPI_VERBOSE=2)."""
    out = [g.HEADER, '#include "fortran/redirect.h"\n\nnamespace tsmpi::fortran {\n\nconst Routine kRoutines[] = {\n']
    if not classified:
        out.append("    {\"-\", \"-\", Binding::kMpifh, Path::kNone, false},\n")
    for name, binding, fn, path, lib, copied in classified:
        out.append(f"    {{\"{name}\", {g.cxx_string(fn or '-')}, Binding::k{binding.capitalize()}, "
                   f"Path::k{path.capitalize()}, {'true' if copied is not None else 'false'}}},\n")
    out.append(f"}};\nconst std::size_t kRoutineCount = {len(classified)};\n\n}}  // namespace tsmpi::fortran\n")
    return "".join(out)
