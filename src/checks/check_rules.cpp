#include "checks/check_rules.h"

#include <string_view>

#include "runtime/mpi_version.h"
#include "runtime/options.h"

namespace tsmpi::checks {

Rule rule_for(const FunctionInfo& f) {
  Rule r;
  std::string_view handles = f.handles;
  const bool on_object = handles.find("Comm") != std::string_view::npos || handles.find("Win") != std::string_view::npos ||
                         handles.find("File") != std::string_view::npos;
  r.collective = (f.category == Category::Collective && on_object) || builds_communicator(f);
  r.completes = f.family == Family::kWait || f.family == Family::kTest;
  r.frees_request = std::string_view(f.name) == "MPI_Request_free";
  r.creates_request = std::string_view(f.objects).find("new:Request") != std::string_view::npos;
  const std::string_view objects = f.objects;
  r.frees_object = objects.find("free:Comm") != std::string_view::npos ||
                   objects.find("free:Win") != std::string_view::npos || objects.find("free:File") != std::string_view::npos;
  r.moves_data = f.family == Family::kSend || f.family == Family::kBsend || f.family == Family::kRecv ||
                 f.family == Family::kSendrecv || f.family == Family::kMrecv;
  const std::string_view name = f.name;
  r.makes_stream_comm = name == "MPIX_Stream_comm_create";
  r.on_stream = handles.find("Stream") != std::string_view::npos && objects.find("Stream") == std::string_view::npos &&
                !r.makes_stream_comm && name != "MPIX_Stream_comm_create_multiplex" && name != "MPIX_Comm_get_stream";
  return r;
}

bool native_threadcomm(const HandleRef& object) {
#if TSMPI_HAVE_NATIVE_THREADCOMM
  if (object.kind != Kind::Comm || !native_threadcomm_chosen()) return false;
  int flag = 0;
  return PMPIX_Comm_test_threadcomm(handle_from_bits<MPI_Comm>(object.bits), &flag) == MPI_SUCCESS && flag;
#else
  (void)object;
  return false;
#endif
}

}  // namespace tsmpi::checks
