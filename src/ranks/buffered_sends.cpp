#include "ranks/buffered_sends.h"

#include <memory>
#include <mutex>

#include "locking/backoff.h"
#include "ranks/address_space.h"
#include "ranks/api.h"
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
std::unique_ptr<Buffer[]> g_buffers;  // one per MPI process of the address space
Buffer g_process;                     // the MPI's, attached by this OS process (threadcomm)

// Both kinds of buffer (with b.mu held): what attach and detach set.
void set(Buffer& b, void* buffer, MPI_Count size, bool attached) {
  b.buffer = buffer;
  b.size = size;
  b.attached = attached;
}

// Runs f() with b.mu held once no message keeps room in b (progressing the engine's network
// meanwhile, which sends them).
template <class F>
int when_unkept(Buffer& b, F f) {
  Backoff backoff;
  for (;;) {
    {
      std::lock_guard g(b.mu);
      if (b.kept == 0) return f();
    }
    progress();
    backoff.pause();
  }
}
}  // namespace

void make_buffers(int k) { g_buffers = std::make_unique<Buffer[]>(static_cast<std::size_t>(k)); }

int attach(int index, void* buffer, MPI_Count size) {
  Buffer& b = g_buffers[static_cast<std::size_t>(index)];
  std::lock_guard g(b.mu);
  if (b.attached) return MPI_ERR_BUFFER;
  if (size < 0) return MPI_ERR_ARG;
  set(b, buffer, size, true);
  return MPI_SUCCESS;
}

int detach(int index, void* buffer_addr, MPI_Count* size) {
  Buffer& b = g_buffers[static_cast<std::size_t>(index)];
  return when_unkept(b, [&] {
    *static_cast<void**>(buffer_addr) = b.attached ? b.buffer : nullptr;
    *size = b.attached ? b.size : 0;
    set(b, nullptr, 0, false);
    return MPI_SUCCESS;
  });
}

int reserve(std::size_t bytes, bool keep, Held* held) {
  const int index = asp::attached_index();
  if (index >= 0 && !g_buffers) return MPI_SUCCESS;
  Buffer& b = index >= 0 ? g_buffers[static_cast<std::size_t>(index)] : g_process;
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

bool engine_buffer() { return asp::attached_index() >= 0; }
int engine_attach(void* buffer, MPI_Count size) { return api::buffer_attach(buffer, size); }
int engine_detach(void* buffer_addr, MPI_Count* size) { return api::buffer_detach(buffer_addr, size); }

void process_attached(void* buffer, MPI_Count size) {
  std::lock_guard g(g_process.mu);
  set(g_process, buffer, size, true);
}

void process_detach_wait() {
  when_unkept(g_process, [] { return MPI_SUCCESS; });
}

void process_detached() {
  std::lock_guard g(g_process.mu);
  set(g_process, nullptr, 0, false);
}

}  // namespace tsmpi::ranks::bsend
