// The probe policies (TSMPI_PROBE, docs/probe-policies.md). Each implements the same operations;
// src/matching/handlers.h picks one per call. PROC_NULL sources never reach them.
#pragma once
#include <mpi.h>

#include <vector>

#include "matching/mpi_calls.h"
#include "matching/original_call.h"
#include "matching/persistent_recv.h"

namespace tsmpi::matching {

enum class Policy : unsigned char { kOff, kMprobe, kLock2d, kHelper };
extern Policy g_policy;  // set at MPI_Init, before any wrapper can call a policy

// What every policy provides. `original` is the call as it would run without a policy.
#define TSMPI_PROBE_POLICY_OPERATIONS                                                                   \
  int probe(int source, int tag, MPI_Comm comm, MPI_Status* status);                                    \
  int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);                        \
  int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);             \
  int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status); \
  int recv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Status* status,                     \
           const OriginalCall& original);                                                               \
  int irecv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Request* request,                  \
            const OriginalCall& original);                                                              \
  /* Whether a send-receive's receive half must go through the policy (else: original call). */         \
  bool takes_receive(MPI_Comm comm, int source, int tag);                                               \
  int sendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag,  \
               MPI_Comm comm, MPI_Status* status);                                                      \
  /* send.buf may point into owned_send, which the policy keeps until the send has completed. */     \
  int isendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag, \
                MPI_Comm comm, MPI_Request* request, std::vector<char> owned_send,                      \
                const OriginalCall& original);                                                          \
  int start(MPI_Request* request, const PersistentRecv& p, const OriginalCall& original);

namespace mprobe_policy { TSMPI_PROBE_POLICY_OPERATIONS }
namespace lock2d_policy { TSMPI_PROBE_POLICY_OPERATIONS }
namespace helper_policy { TSMPI_PROBE_POLICY_OPERATIONS }

}  // namespace tsmpi::matching
