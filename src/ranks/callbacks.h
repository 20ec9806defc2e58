// The program's C callbacks for communicators, kept so that they get a thread-rank
// communicator's own handle. The engine keeps each thread-rank's error handler and attributes on
// private MPI communicators (errors.h, comm_ops.cpp); the MPI would hand those to the program.
//  - Error handlers: MPI_Comm_create_errhandler (and MPI-1's MPI_Errhandler_create) record the
//    function by handle; raise() calls it with the thread-rank communicator.
//  - Keyvals: MPI_Comm_create_keyval (and MPI_Keyval_create) give the MPI tsmpi's copy and
//    delete functions, whose extra_state holds the program's; they pass the MPI's communicator
//    on, or the thread-rank communicator a private one stands in for.
// The table's threadcomm column says `record` for these calls: their wrappers come here in
// every mode (they are rare, and programs make handlers and keyvals before any thread-rank
// exists). Only calls from C: when an MPI's Fortran library calls the C function (MPICH's does)
// the callbacks are Fortran ones, which the MPI calls its own way, and they are left alone.
#pragma once
#include <mpi.h>

namespace tsmpi::ranks {

using ErrhandlerFn = MPI_Comm_errhandler_function;
using CopyFn = MPI_Comm_copy_attr_function;
using DeleteFn = MPI_Comm_delete_attr_function;

// The program's C function behind eh, or nullptr (predefined, made in Fortran, unknown).
ErrhandlerFn* handler_function(MPI_Errhandler eh);

// While `carrier` (a private communicator) exists, attribute callbacks on it get `comm`;
// dropped once it is freed (its delete callbacks got `comm` too).
void stand_in(MPI_Comm carrier, MPI_Comm comm);
void drop_stand_in(MPI_Comm carrier, MPI_Comm comm);

namespace record {

// Whether the call came from one of the MPI's Fortran libraries (its return address).
bool from_fortran(void* return_address);
void made_errhandler(void* caller, MPI_Errhandler eh, ErrhandlerFn* fn);

struct KeyvalArgs {
  CopyFn* copy;
  DeleteFn* del;
  void* extra;
};
// What to give the MPI for a keyval the program makes: its own arguments, or tsmpi's functions.
KeyvalArgs keyval_args(void* caller, void* copy, void* del, void* extra);

// The wrappers' entry points (generated, codegen/generate.py): `call` is the call the wrapper
// would make (pass-through or hooked). Function types are template parameters since MPI-1's
// are declared only by some mpi.h.
template <class Call, class Fn>
int Comm_create_errhandler(void* caller, Call call, Fn* fn, MPI_Errhandler* eh) {
  const int rc = call(fn, eh);
  if (rc == MPI_SUCCESS) made_errhandler(caller, *eh, reinterpret_cast<ErrhandlerFn*>(fn));
  return rc;
}
template <class Call, class Fn>
int Errhandler_create(void* caller, Call call, Fn* fn, MPI_Errhandler* eh) {
  return Comm_create_errhandler(caller, call, fn, eh);
}
template <class Call, class Copy, class Delete>
int Comm_create_keyval(void* caller, Call call, Copy* copy, Delete* del, int* keyval, void* extra) {
  const KeyvalArgs a = keyval_args(caller, reinterpret_cast<void*>(copy), reinterpret_cast<void*>(del), extra);
  return call(reinterpret_cast<Copy*>(a.copy), reinterpret_cast<Delete*>(a.del), keyval, a.extra);
}
template <class Call, class Copy, class Delete>
int Keyval_create(void* caller, Call call, Copy* copy, Delete* del, int* keyval, void* extra) {
  return Comm_create_keyval(caller, call, copy, del, keyval, extra);
}

}  // namespace record
}  // namespace tsmpi::ranks
