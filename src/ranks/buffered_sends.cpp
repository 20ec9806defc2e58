#include "ranks/buffered_sends.h"

#include <memory>
#include <mutex>

#include "locking/backoff.h"
#include "ranks/address_space.h"
#include "ranks/transport.h"

namespace tsmpi::ranks::bsend {

struct Buffer {
  std::mutex mu;
  void* buffer = nullptr;
  MPI_Count size = 0;
  bool attached = false;
  MPI_Count kept = 0;  // room kept by messages the MPI has not yet sent
};

namespace {
std::unique_ptr<Buffer[]> g_buffers;
}  // namespace

void make_buffers(int k) { g_buffers = std::make_unique<Buffer[]>(static_cast<std::size_t>(k)); }

int attach(int index, void* buffer, MPI_Count size) {
  Buffer& b = g_buffers[static_cast<std::size_t>(index)];
  std::lock_guard g(b.mu);
  if (b.attached) return MPI_ERR_BUFFER;
  if (size < 0) return MPI_ERR_ARG;
  b.buffer = buffer;
  b.size = size;
  b.attached = true;
  return MPI_SUCCESS;
}

int detach(int index, void* buffer_addr, MPI_Count* size) {
  Buffer& b = g_buffers[static_cast<std::size_t>(index)];
  Backoff backoff;
  for (;;) {
    {
      std::lock_guard g(b.mu);
      if (b.kept == 0) {
        *static_cast<void**>(buffer_addr) = b.attached ? b.buffer : nullptr;
        *size = b.attached ? b.size : 0;
        b.buffer = nullptr;
        b.size = 0;
        b.attached = false;
        return MPI_SUCCESS;
      }
    }
    progress();
    backoff.pause();
  }
}

int reserve(std::size_t bytes, bool keep, Held* held) {
  const int index = asp::attached_index();
  if (index < 0 || !g_buffers) return MPI_SUCCESS;
  Buffer& b = g_buffers[static_cast<std::size_t>(index)];
  const MPI_Count need = static_cast<MPI_Count>(bytes) + MPI_BSEND_OVERHEAD;
  std::lock_guard g(b.mu);
  if (!b.attached || need > b.size - b.kept) return MPI_ERR_BUFFER;
  if (keep) {
    b.kept += need;
    *held = {&b, need};
  }
  return MPI_SUCCESS;
}

void release(const Held& held) {
  if (!held.b) return;
  std::lock_guard g(held.b->mu);
  held.b->kept -= held.n;
}

}  // namespace tsmpi::ranks::bsend
