#include "runtime/mpi_version.h"
#include "runtime/handles.h"

namespace tsmpi {
namespace {

template <class F>
auto with_type(Kind kind, F&& f) {
  switch (kind) {
    case Kind::Comm: return f(HandleType<Kind::Comm>{});
    case Kind::Win: return f(HandleType<Kind::Win>{});
    case Kind::File: return f(HandleType<Kind::File>{});
    case Kind::Group: return f(HandleType<Kind::Group>{});
    case Kind::Datatype: return f(HandleType<Kind::Datatype>{});
    case Kind::Op: return f(HandleType<Kind::Op>{});
    case Kind::Errhandler: return f(HandleType<Kind::Errhandler>{});
    case Kind::Info: return f(HandleType<Kind::Info>{});
    case Kind::Request: return f(HandleType<Kind::Request>{});
    case Kind::Message: return f(HandleType<Kind::Message>{});
#if TSMPI_HAVE_SESSIONS
    case Kind::Session: return f(HandleType<Kind::Session>{});
#else
    case Kind::Session: break;
#endif
#if TSMPI_HAVE_STREAMS
    case Kind::Stream: return f(HandleType<Kind::Stream>{});
#else
    case Kind::Stream: break;
#endif
    case Kind::Keyval: return f(HandleType<Kind::Keyval>{});
    case Kind::kNone: break;
  }
  return f(HandleType<Kind::Keyval>{});  // not reached for handle kinds
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Comm: return "communicator";
    case Kind::Win: return "window";
    case Kind::File: return "file";
    case Kind::Group: return "group";
    case Kind::Datatype: return "datatype";
    case Kind::Op: return "operation";
    case Kind::Errhandler: return "error handler";
    case Kind::Info: return "info";
    case Kind::Request: return "request";
    case Kind::Message: return "message";
    case Kind::Session: return "session";
    case Kind::Stream: return "stream";
    case Kind::Keyval: return "attribute key";
    case Kind::kNone: break;
  }
  return "object";
}

std::uintptr_t read_handle(Kind kind, const void* where, int i) {
  // An erroneous call may pass NULL for a handle or array (MPI_Wait(NULL, ...)): the MPI reports
  // it; to tsmpi's protections it holds null handles.
  if (where == nullptr) return null_handle(kind);
  return with_type(kind, [&](auto t) {
    using H = typename decltype(t)::type;
    return handle_bits(static_cast<const H*>(where)[i]);
  });
}

void write_handle(Kind kind, void* where, int i, std::uintptr_t bits) {
  with_type(kind, [&](auto t) {
    using H = typename decltype(t)::type;
    static_cast<H*>(where)[i] = handle_from_bits<H>(bits);
    return 0;
  });
}

std::uintptr_t null_handle(Kind kind) {
  switch (kind) {
    case Kind::Comm: return handle_bits(MPI_COMM_NULL);
    case Kind::Win: return handle_bits(MPI_WIN_NULL);
    case Kind::File: return handle_bits(MPI_FILE_NULL);
    case Kind::Group: return handle_bits(MPI_GROUP_NULL);
    case Kind::Datatype: return handle_bits(MPI_DATATYPE_NULL);
    case Kind::Op: return handle_bits(MPI_OP_NULL);
    case Kind::Errhandler: return handle_bits(MPI_ERRHANDLER_NULL);
    case Kind::Info: return handle_bits(MPI_INFO_NULL);
    case Kind::Request: return handle_bits(MPI_REQUEST_NULL);
    case Kind::Message: return handle_bits(MPI_MESSAGE_NULL);
#if TSMPI_HAVE_SESSIONS
    case Kind::Session: return handle_bits(MPI_SESSION_NULL);
#else
    case Kind::Session: break;
#endif
#if TSMPI_HAVE_STREAMS
    case Kind::Stream: return handle_bits(MPIX_STREAM_NULL);
#else
    case Kind::Stream: break;
#endif
    case Kind::Keyval: return handle_bits(static_cast<int>(MPI_KEYVAL_INVALID));
    case Kind::kNone: break;
  }
  return 0;
}

}  // namespace tsmpi
