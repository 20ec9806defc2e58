#include "runtime/thread_state.h"

namespace tsmpi {
TSMPI_TLS ThreadState tl_thread;
}  // namespace tsmpi
