#include "locking/buffer_lock.h"

namespace tsmpi::own {

bool g_enabled = false;

std::mutex& buffer_lock() {
  static std::mutex m;
  return m;
}

}  // namespace tsmpi::own
