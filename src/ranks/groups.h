// Groups of thread-ranks: family ranks in group order. MPI_GROUP_EMPTY stays the MPI's own
// handle; the calls here treat it as a group without members.
#pragma once
#include <mpi.h>

#include <vector>

#include "ranks/comm.h"

namespace tsmpi::ranks {

struct Group {
  Family* family = nullptr;
  std::vector<int> members;  // family ranks
};

Group* group_of(MPI_Group g);
// A group handle the engine made and released: a freed group (MPI_ERR_GROUP).
bool freed_group(MPI_Group g);
MPI_Group new_group(Family* f, std::vector<int> members);  // MPI_GROUP_EMPTY when empty
// MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two member lists.
int compare_members(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace tsmpi::ranks
