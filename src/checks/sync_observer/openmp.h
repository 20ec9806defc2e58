// What the two OpenMP observers (gomp.cpp for libgomp, ompt.cpp for LLVM libomp) share: a team's
// happens-before keys and the calling thread's innermost team.
#pragma once
#include "checks/happens_before/clock.h"

namespace tsmpi::sync {

// A parallel region's team; each member's address is a happens-before key.
struct Team {
  char fork = 0;     // the encountering thread's present when the region began
  char join = 0;     // every member's present when it ended its part
  char barrier = 0;  // the team's barriers
  char tasks = 0;    // the team's completed tasks
  char ordered = 0;  // ordered regions
  int size = 0;      // members (OMPT gives it; libgomp's is asked)
};

void forget_team(Team& t);

// The calling thread's innermost team (null outside a parallel region we saw begin).
extern thread_local Team* tl_team;
// Members of the calling thread's team.
int team_size();

// OMPT is observing the OpenMP runtime: the GOMP_* entry points pass straight through.
extern bool g_ompt_observes;

}  // namespace tsmpi::sync
