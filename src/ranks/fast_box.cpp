#include "ranks/fast_box.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tsmpi::ranks {

namespace {
int membarrier(int cmd) { return static_cast<int>(syscall(SYS_membarrier, cmd, 0, 0)); }

// Registered once, before the first mailbox is made (static initialization of this library);
// a kernel or sandbox without MEMBARRIER_CMD_PRIVATE_EXPEDITED leaves senders fencing.
bool register_membarrier() {
  const int cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}
}  // namespace

bool g_light_is_fence = !register_membarrier();

void heavy_barrier() {
  if (g_light_is_fence || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    // Without membarrier senders fence, and a fence here completes the Dekker.
    full_fence();
  }
}

}  // namespace tsmpi::ranks
