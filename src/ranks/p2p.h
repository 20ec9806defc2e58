// Point-to-point between thread-ranks, as rank `me` of a communicator: a message between two
// threads of one process never enters the MPI (a posted receive is filled straight from the
// sender's buffer; otherwise small messages are copied into a pooled packet and large ones wait
// for the receive); a message to another process goes through transport.h.
#pragma once
#include <mpi.h>

#include "ranks/comm.h"
#include "ranks/operations.h"
#include "ranks/transport.h"

namespace tsmpi::ranks {

// Starts a send; op->done is set when the buffer may be reused. op->bytes is set here.
int start_send(Comm* c, int me, const TypedBuffer& b, int dest, int tag, SendMode mode, Channel ch, SendOp* op);
int send(Comm* c, int me, const TypedBuffer& b, int dest, int tag, SendMode mode, Channel ch);

// Starts a receive into r->buf from (src, tag); r->done is set when it has completed.
int start_recv(Comm* c, int me, int src, int tag, const TypedBuffer& b, Channel ch, RecvOp* r);
int recv(Comm* c, int me, int src, int tag, const TypedBuffer& b, Channel ch, MPI_Status* status);
// Cancels a posted receive: true when it had not matched (it is then complete and cancelled).
bool cancel_recv(Comm* c, int me, Channel ch, RecvOp* r);
// Cancels a send whose message still waits unreceived in this process (eager, rendezvous or
// synchronous): true when it was withdrawn (op is then complete and cancelled). A message that
// met its receive, or went to another process, is not cancelled.
bool cancel_send(SendOp* op);

int iprobe(Comm* c, int me, int src, int tag, int* flag, MPI_Status* status);
int probe(Comm* c, int me, int src, int tag, MPI_Status* status);
// Matched probe: the message is taken out of the mailbox (nullptr when none, or for
// MPI_PROC_NULL, where *no_proc is set).
Packet* improbe(Comm* c, int me, int src, int tag, MPI_Status* status);
Packet* mprobe(Comm* c, int me, int src, int tag, MPI_Status* status);
// Receives a matched message into b.
int mrecv(Packet* p, const TypedBuffer& b, MPI_Status* status);
// Completes r (a started receive into b) with a message already out of its mailbox.
void recv_taken(Packet* p, const TypedBuffer& b, RecvOp* r);

// The message a probe of the calling thread reserved that a receive (src, tag) on c must take
// (its status into *status), or nullptr (p2p_calls.cpp; only where several threads act as one
// rank and a probe policy runs).
Packet* reserved_for(const Comm* c, int src, int tag, MPI_Status* status = MPI_STATUS_IGNORE);

}  // namespace tsmpi::ranks
