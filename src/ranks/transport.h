// Messages between thread-ranks of different processes: one MPI message on the family's private
// duplicate of the parent communicator, a header (context, channel, source, destination, tag)
// followed by the packed data. Sends from one thread-rank to one process keep their order in the
// MPI (same communicator, tag and source), and one poller at a time takes arrivals out of the
// MPI in order, so non-overtaking holds across processes. Threads waiting for anything another
// process may do poll (progress()), which also drives the MPI's own progress.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "ranks/buffered_sends.h"
#include "ranks/comm.h"
#include "ranks/operations.h"

namespace tsmpi::ranks {

enum class SendMode : std::uint8_t { kStandard, kSynchronous, kReady, kBuffered };

// Starts sending b to `dest` (in another process); op completes when the buffer may be reused
// (kSynchronous: once the receive has matched; kBuffered: at once, the message keeping `held`
// in its process's attached buffer until the MPI has sent it).
int remote_send(Comm* c, int me, const TypedBuffer& b, int dest, int tag, SendMode mode, Channel ch, SendOp* op,
                const bsend::Held& held = {});
// Sends the acknowledgement of a synchronous message received here.
void remote_ack(Family* f, int proc, std::uint64_t id);
// Takes arrived messages out of the MPI and completes sends in flight (one thread at a time;
// others return at once).
void progress();
// Delivers messages that arrived before their communicator was made here.
void adopt_orphans(Comm* c);
// Registers / forgets a family that spans several processes.
void add_polled_family(Family* f);
void remove_polled_family(Family* f);

// Waits for d; polls the network when another process may be the one to set it.
void wait_done(Done& d, const Family* f);
// The same for an operation whose message is matched in `box` (a receive's mailbox, or the one
// a waiting send went to): the thread polls it while it spins, and parks it before it sleeps
// (mailbox.h). `helping`: a waiting send, which takes a share of its receiver's copy while it
// spins (operations.h: SharedCopy).
void wait_done(Done& d, const Family* f, Mailbox* box, SendOp* helping = nullptr);

// Puts a message (with its packet) into dst's mailbox, or completes the receive it matches.
void arrive_local(Comm* c, Channel ch, int dst, Packet* p);

}  // namespace tsmpi::ranks
