// What diagnostics (the hang watchdog, reports) may ask about thread-rank communicators: who
// their members are (process and thread of each rank) and which rank the calling thread is.
// Local reads only, no MPI calls.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tsmpi::ranks {

struct CommView {
  bool root = false;               // the threadcomm itself (else made from it by dup/split)
  bool address_space = false;      // MPI processes of address spaces (tsmpirun -asp): MPI_COMM_WORLD or made from it
  std::vector<int> process;        // comm rank -> rank of its process in the threadcomm's parent communicator
  std::vector<int> world;          // comm rank -> MPI_COMM_WORLD rank of its process (-1 if not in it)
  std::vector<int> thread;         // comm rank -> the thread's index in its process (0 .. num_threads-1)
  std::vector<int> family_rank;    // comm rank -> its rank in the threadcomm
};

// False when bits is not a live thread-rank communicator.
bool view_comm(std::uintptr_t comm_bits, CommView* out);
// The calling thread's rank in that communicator, -1 if none.
int caller_rank(std::uintptr_t comm_bits);
// "threadcomm rank 5 = process 1 thread 2" (process: world rank when known); in address spaces
// "rank 5 (address space 1, index 2)", by MPI_COMM_WORLD rank.
std::string rank_name(const CommView& v, int rank);

}  // namespace tsmpi::ranks
