#include "locking/group_agreement.h"

#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <tuple>

#include "locking/progress.h"
#include "locking/serialize_lock.h"

namespace tsmpi::serial {
namespace {

constexpr int kTag = 0x7511;

struct Message {
  std::uint64_t key;
  std::uint64_t round;
  std::int64_t value;
};

// All guarded by the serialize lock.
MPI_Comm g_channel = MPI_COMM_NULL;
MPI_Group g_world_group = MPI_GROUP_NULL;
int g_world_rank = -1;
std::map<std::tuple<int, std::uint64_t, std::uint64_t>, std::int64_t> g_mailbox;  // (source, key, round)
struct PendingSend {
  MPI_Request request;
  std::unique_ptr<Message> message;
};
std::list<PendingSend> g_sends;

// Under the lock: moves every arrived agreement message into the mailbox and retires
// completed sends.
void drain() {
  while (true) {
    int flag = 0;
    MPI_Status status;
    PMPI_Iprobe(MPI_ANY_SOURCE, kTag, g_channel, &flag, &status);
    if (!flag) break;
    Message m;
    PMPI_Recv(&m, sizeof m, MPI_BYTE, status.MPI_SOURCE, kTag, g_channel, MPI_STATUS_IGNORE);
    g_mailbox[{status.MPI_SOURCE, m.key, m.round}] = m.value;
  }
  for (auto it = g_sends.begin(); it != g_sends.end();) {
    int done = 0;
    PMPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done ? g_sends.erase(it) : std::next(it);
  }
}

void send(int dest, std::uint64_t key, std::uint64_t round, std::int64_t value) {
  Guard g;
  auto m = std::make_unique<Message>(Message{key, round, value});
  MPI_Request request;
  PMPI_Isend(m.get(), sizeof(Message), MPI_BYTE, dest, kTag, g_channel, &request);
  g_sends.push_back({request, std::move(m)});
}

std::int64_t receive(int source, std::uint64_t key, std::uint64_t round) {
  std::int64_t v = 0;
  poll_until_done([&](int* found) {  // under the lock, by whichever thread polls
    drain();
    auto it = g_mailbox.find({source, key, round});
    if ((*found = it != g_mailbox.end())) {
      v = it->second;
      g_mailbox.erase(it);
    }
    return MPI_SUCCESS;
  });
  return v;
}

}  // namespace

void group_agreement_init() {
  PMPI_Comm_dup(MPI_COMM_WORLD, &g_channel);
  PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
}

int world_rank_of(MPI_Comm comm, int rank) {
  Guard g;
  MPI_Group group;
  PMPI_Comm_group(comm, &group);
  int out = MPI_UNDEFINED;
  PMPI_Group_translate_ranks(group, 1, &rank, g_world_group, &out);
  PMPI_Group_free(&group);
  return out;
}

std::vector<int> world_ranks_of(MPI_Group group) {
  Guard g;
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> ranks(n), world(n);
  for (int i = 0; i < n; ++i) ranks[i] = i;
  PMPI_Group_translate_ranks(group, n, ranks.data(), g_world_group, world.data());
  std::sort(world.begin(), world.end());
  return world;
}

int agree_in_group(const std::vector<int>& members, std::uint64_t key, std::uint64_t round, int mine,
                   int* all) {
  // Gather to the lowest member, which answers everyone: two message rounds per agreement.
  const int leader = members.front();
  if (g_world_rank == leader) {
    std::int64_t acc = mine;
    for (int m : members)
      if (m != leader) acc &= receive(m, key, 2 * round);
    for (int m : members)
      if (m != leader) send(m, key, 2 * round + 1, acc);
    *all = static_cast<int>(acc);
  } else {
    send(leader, key, 2 * round, mine);
    *all = static_cast<int>(receive(leader, key, 2 * round + 1));
  }
  return MPI_SUCCESS;
}

}  // namespace tsmpi::serial
