// Agreement among the members of a group that has no communicator of its own yet
// (MPI_Comm_create_group): point-to-point messages on tsmpi's private duplicate of
// MPI_COMM_WORLD, each naming its agreement and round, so concurrent agreements of different
// threads never take each other's messages. Progressed in short locked steps.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace tsmpi::serial {

// Makes the private channel; collective over MPI_COMM_WORLD, called from MPI_Init.
void group_agreement_init();

// The MPI_COMM_WORLD rank of `rank` of comm.
int world_rank_of(MPI_Comm comm, int rank);

// The MPI_COMM_WORLD ranks of a group's members, sorted.
std::vector<int> world_ranks_of(MPI_Group group);

// *all = AND of `mine` over `members` (world ranks, sorted, this process included) for round
// `round` of the agreement `key`.
int agree_in_group(const std::vector<int>& members, std::uint64_t key, std::uint64_t round, int mine,
                   int* all);

}  // namespace tsmpi::serial
