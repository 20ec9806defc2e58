// Threads that carry out nonblocking collectives of thread-ranks: each task runs the blocking
// algorithm as the rank that started it, with the sequence number taken at the call, so it
// progresses without the program's thread. A task may block until other ranks arrive, so a
// task never waits for a free worker: idle workers are reused, otherwise a new one starts.
#pragma once
#include <functional>

namespace tsmpi::ranks {

void run_in_background(std::function<void()> task);

}  // namespace tsmpi::ranks
