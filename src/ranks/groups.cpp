// Group calls on groups of thread-ranks (groups.h).
#include "ranks/groups.h"

#include <algorithm>

#include "ranks/api.h"
#include "ranks/errors.h"
#include "ranks/handle_space.h"

namespace tsmpi::ranks {

Group* group_of(MPI_Group g) { return find_as<Group>(Made::kGroup, handle_bits(g)); }

MPI_Group new_group(Family* f, std::vector<int> members) {
  if (members.empty()) return MPI_GROUP_EMPTY;
  auto* g = new Group{f, std::move(members)};
  return handle_from_bits<MPI_Group>(make_handle(Made::kGroup, g));
}

int compare_members(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  std::vector<int> x = a, y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? MPI_SIMILAR : MPI_UNEQUAL;
}

bool freed_group(MPI_Group g) { return !group_of(g) && in_space(handle_bits(g)); }

namespace {

const std::vector<int> kNoMembers;
const std::vector<int>& members_of(const Group* g) { return g ? g->members : kNoMembers; }
bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The ranks a list of (first, last, stride) triplets names, checked against the group's size.
int expand_ranges(int n, const int ranges[][3], int size, std::vector<int>* out) {
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return MPI_ERR_ARG;
    if (first < 0 || first >= size || last < 0 || last >= size) return MPI_ERR_RANK;
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) return MPI_ERR_ARG;
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out->push_back(r);
  }
  return MPI_SUCCESS;
}

// The ranks of a list, checked against the group's size.
int list_ranks(int n, const int* ranks, int size, std::vector<int>* out) {
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size) return MPI_ERR_RANK;
    out->push_back(ranks[i]);
  }
  return MPI_SUCCESS;
}

// The group of group's members at the ranks `ranks_of` names (include) or at all others.
template <class Ranks>
int subgroup(MPI_Group group, bool include, MPI_Group* newgroup, const char* call, Ranks&& ranks_of) {
  Group* g = group_of(group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, call);
  std::vector<int> ranks;
  if (int rc = ranks_of(static_cast<int>(g->members.size()), &ranks)) return raise(nullptr, rc, call);
  std::vector<int> members;
  if (include) {
    for (int r : ranks) members.push_back(g->members[static_cast<std::size_t>(r)]);
  } else {
    std::vector<bool> out(g->members.size(), false);
    for (int r : ranks) out[static_cast<std::size_t>(r)] = true;
    for (std::size_t i = 0; i < g->members.size(); ++i)
      if (!out[i]) members.push_back(g->members[i]);
  }
  *newgroup = new_group(g->family, std::move(members));
  return MPI_SUCCESS;
}

// Union, intersection or difference of two groups of one family.
template <class Pick>
int combine(MPI_Group a, MPI_Group b, MPI_Group* out, const char* call, Pick&& pick) {
  if (freed_group(a) || freed_group(b)) return raise(nullptr, MPI_ERR_GROUP, call);
  Group* x = group_of(a);
  Group* y = group_of(b);
  if (x && y && x->family != y->family) return raise(nullptr, MPI_ERR_GROUP, call);
  Family* f = x ? x->family : y->family;
  *out = new_group(f, pick(members_of(x), members_of(y)));
  return MPI_SUCCESS;
}
}  // namespace

namespace api {

int group_size(MPI_Group group, int* size) {
  Group* g = group_of(group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_size");
  *size = static_cast<int>(g->members.size());
  return MPI_SUCCESS;
}

int group_rank(MPI_Group group, int* rank) {
  Group* g = group_of(group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_rank");
  int me = family_rank_of_caller(g->family);
  auto it = std::find(g->members.begin(), g->members.end(), me);
  *rank = me < 0 || it == g->members.end() ? MPI_UNDEFINED : static_cast<int>(it - g->members.begin());
  return MPI_SUCCESS;
}

int group_translate_ranks(MPI_Group a, int n, const int* ranks_a, MPI_Group b, int* ranks_b) {
  if (freed_group(a) || freed_group(b)) return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_translate_ranks");
  Group* x = group_of(a);
  Group* y = group_of(b);
  for (int i = 0; i < n; ++i) {
    ranks_b[i] = MPI_UNDEFINED;
    if (ranks_a[i] == MPI_PROC_NULL) {
      ranks_b[i] = MPI_PROC_NULL;
      continue;
    }
    if (!x || !y || x->family != y->family || ranks_a[i] < 0 || ranks_a[i] >= static_cast<int>(x->members.size()))
      continue;
    auto it = std::find(y->members.begin(), y->members.end(), x->members[static_cast<std::size_t>(ranks_a[i])]);
    if (it != y->members.end()) ranks_b[i] = static_cast<int>(it - y->members.begin());
  }
  return MPI_SUCCESS;
}

int group_compare(MPI_Group a, MPI_Group b, int* result) {
  if (freed_group(a) || freed_group(b)) return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_compare");
  Group* x = group_of(a);
  Group* y = group_of(b);
  *result = x && y && x->family == y->family ? compare_members(x->members, y->members) : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

int group_free(MPI_Group* group) {
  std::uintptr_t bits = handle_bits(*group);
  Group* g = group_of(*group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_free");
  release_handle(bits);
  delete g;
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

int group_incl(MPI_Group group, int n, const int* ranks, MPI_Group* newgroup) {
  return subgroup(group, true, newgroup, "MPI_Group_incl",
                  [&](int size, std::vector<int>* out) { return list_ranks(n, ranks, size, out); });
}

int group_excl(MPI_Group group, int n, const int* ranks, MPI_Group* newgroup) {
  return subgroup(group, false, newgroup, "MPI_Group_excl",
                  [&](int size, std::vector<int>* out) { return list_ranks(n, ranks, size, out); });
}

int group_union(MPI_Group a, MPI_Group b, MPI_Group* out) {
  return combine(a, b, out, "MPI_Group_union", [](const std::vector<int>& x, const std::vector<int>& y) {
    std::vector<int> m = x;
    for (int r : y)
      if (!contains(x, r)) m.push_back(r);
    return m;
  });
}

int group_intersection(MPI_Group a, MPI_Group b, MPI_Group* out) {
  return combine(a, b, out, "MPI_Group_intersection", [](const std::vector<int>& x, const std::vector<int>& y) {
    std::vector<int> m;
    for (int r : x)
      if (contains(y, r)) m.push_back(r);
    return m;
  });
}

int group_difference(MPI_Group a, MPI_Group b, MPI_Group* out) {
  return combine(a, b, out, "MPI_Group_difference", [](const std::vector<int>& x, const std::vector<int>& y) {
    std::vector<int> m;
    for (int r : x)
      if (!contains(y, r)) m.push_back(r);
    return m;
  });
}

int group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return subgroup(group, true, newgroup, "MPI_Group_range_incl",
                  [&](int size, std::vector<int>* out) { return expand_ranges(n, ranges, size, out); });
}

int group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return subgroup(group, false, newgroup, "MPI_Group_range_excl",
                  [&](int size, std::vector<int>* out) { return expand_ranges(n, ranges, size, out); });
}

}  // namespace api
}  // namespace tsmpi::ranks
