// The pieces of a message between thread-ranks: a message waiting to be received (Packet), a
// posted receive (RecvOp) and a send whose buffer the receiver reads (SendOp).
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ranks/typed_buffer.h"
#include "ranks/wake.h"

namespace tsmpi::ranks {

struct Comm;
class Mailbox;

// Messages up to this size are copied into a packet when no receive is posted yet; larger ones
// wait for the receive, which copies them straight from the sender's buffer.
inline constexpr std::size_t kEagerLimit = 16 * 1024;
inline constexpr std::size_t kInlineBytes = 256;

// How an operation completes: `done` is set, then `then(owner)` runs (a request's completion),
// by whichever thread completes it.
struct Completion {
  Done done;
  void (*then)(void* owner) = nullptr;
  void* owner = nullptr;
  // Set by the caller before the operation starts when no other thread can see it yet (a
  // blocking send, a request whose handle is not returned yet): completed at once, it is then
  // only marked completed_at_start, for the caller to complete with plain stores (a
  // read-modify-write would wait for the thread's earlier stores to reach other cores). Cleared
  // when the operation is published (a receive posted).
  bool unseen = false;
  bool completed_at_start = false;
  void complete() {
    void (*t)(void*) = then;
    void* o = owner;
    done.set();  // may end the operation's life (a blocking caller returns)
    if (t) t(o);
  }
  void complete_or_mark() {
    if (unseen) completed_at_start = true;
    else complete();
  }
};

// A large contiguous message copied straight from a local sender's buffer is copied in chunks
// that its receiver and the sender, if it waits for the receive, take in turn: one core alone
// copies about 7 GB/s here, where the MPI's shared-memory transports pipeline their two copies on
// both cores. Lives in the SendOp (the sender's memory, alive while it waits); `chunks` (0: no
// copy to share) is published last by the receiver, which waits for every chunk taken to be
// finished before it completes the send.
struct SharedCopy {
  const char* from = nullptr;
  char* to = nullptr;
  std::size_t bytes = 0;
  std::atomic<std::uint32_t> chunks{0};
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint32_t> finished{0};
};
// Takes chunks of s until none is left (either side).
void help_copy(SharedCopy& s);

struct SendOp : Completion {
  TypedBuffer buf;
  std::size_t bytes = 0;
  int err = MPI_SUCCESS;
  // Where its message may wait unreceived in this process (MPI_Cancel withdraws it from there):
  // the receiver's mailbox, the message's key and its packet's ident; nullptr when it met a
  // posted receive directly, or went to another process.
  Mailbox* waits_in = nullptr;
  int src = 0, tag = 0;
  std::uint64_t ident = 0;
  bool cancelled = false;
  SharedCopy share;
};

struct RecvOp : Completion {
  RecvOp* next = nullptr;
  int src = 0, tag = 0;  // what it accepts (MPI_ANY_SOURCE, MPI_ANY_TAG)
  std::uint64_t seq = 0;
  TypedBuffer buf;
  std::size_t capacity = 0;  // packed bytes the buffer holds
  // Result.
  int r_src = MPI_ANY_SOURCE, r_tag = MPI_ANY_TAG, r_err = MPI_SUCCESS;
  std::size_t r_bytes = 0;
  bool cancelled = false;
  // inside_mpi: called back by the MPI (a generalized request's query), which in serialize mode
  // already holds its lock.
  void fill(MPI_Status* status, bool inside_mpi = false) const;
};

struct Packet {
  Packet* next = nullptr;
  int src = 0, tag = 0;
  std::uint64_t seq = 0;    // arrival order in its mailbox
  std::uint64_t ident = 0;  // unique in the process while alive (new_packet)
  RecvOp* taker = nullptr;  // the posted receive it matched, until delivered
  std::size_t bytes = 0;
  char* data = nullptr;     // the packed message, or nullptr when the sender's buffer holds it
  SendOp* sender = nullptr;  // a local sender waiting for this message to be received
  int ack_proc = -1;         // a remote synchronous sender: acknowledge to this process ...
  std::uint64_t ack_id = 0;  // ... with this id
  Comm* comm = nullptr;      // where it was addressed (matched probes)
  int dst = 0;
  char* heap = nullptr;
  alignas(16) char small[kInlineBytes];
  // Room for n bytes of data owned by the packet.
  char* reserve(std::size_t n);
};

// A packet from the calling thread's pool, with a fresh ident (or the given one: a message that
// travelled inline in a fast box, made into a packet by its receiver).
Packet* new_packet();
Packet* new_packet(std::uint64_t ident);
// A fresh ident (unique in the process while its message lives).
std::uint64_t new_ident();
void free_packet(Packet* p);

// Copies the message of p into r's buffer and sets r's result (truncation included); completes
// the local sender of a rendezvous or synchronous message. Does not complete r.
void deliver(Packet* p, RecvOp* r);
// For each packet of a list (linked by next) that matched p->taker: deliver, free, complete.
void deliver_taken(Packet* head);
// A small message matched to r while the mailbox's lock is held, copied into r's buffer there
// when that needs no MPI call (true; r is then completed after the lock is released); false
// leaves it to a packet.
bool deliver_in_place(const char* data, std::size_t bytes, int src, int tag, RecvOp* r);
// Same for a send that meets a posted receive directly.
void deliver_direct(const SendOp& s, int src, int tag, RecvOp* r);

// Fills a status from a message's envelope.
void set_status(MPI_Status* status, int src, int tag, int err, std::size_t bytes, bool cancelled,
                bool inside_mpi = false);

}  // namespace tsmpi::ranks
