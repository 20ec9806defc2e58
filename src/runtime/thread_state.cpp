#include "runtime/thread_state.h"

namespace tsmpi {
constinit TSMPI_TLS ThreadState tl_thread;
}  // namespace tsmpi
