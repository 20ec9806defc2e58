#include "locking/lifetime_rules.h"

namespace tsmpi::lifetime {

bool tracked(Kind k) { return k != Kind::kNone && k != Kind::Request; }

Kind kind_named(std::string_view name) {
  static constexpr std::pair<std::string_view, Kind> kNames[] = {
      {"Comm", Kind::Comm}, {"Win", Kind::Win}, {"File", Kind::File}, {"Group", Kind::Group},
      {"Datatype", Kind::Datatype}, {"Op", Kind::Op}, {"Errhandler", Kind::Errhandler},
      {"Info", Kind::Info}, {"Request", Kind::Request}, {"Message", Kind::Message},
      {"Session", Kind::Session}, {"Stream", Kind::Stream}, {"Keyval", Kind::Keyval}};
  for (auto [n, k] : kNames)
    if (n == name) return k;
  return Kind::kNone;
}

// Whether a table column (handles or objects) names a kind object lifetime tracks; without
// messages, for what is tracked by default: MPI_Mprobe and MPI_Mrecv make and consume one per
// message, communication, so they are tracked under TSMPI_CHECK only (tracking them by default
// cost 40-60% of the message rate of an Mprobe program, bench/msgrate.c).
bool lists_tracked(std::string_view column, bool messages) {
  bool any = false;
  for_each_kind(column, [&](Kind k, std::string_view) { any = any || (tracked(k) && (messages || k != Kind::Message)); });
  return any;
}

namespace {

Kind freed_kind(const FunctionInfo& f) {
  Kind freed = Kind::kNone;
  for_each_kind(f.objects, [&](Kind k, std::string_view item) {
    if (item.starts_with("free:") && tracked(k)) freed = k;
  });
  return freed;
}

bool object_call(const FunctionInfo& f) {
  switch (f.category) {
    case Category::AccessOnly: case Category::UpdateRef: case Category::ReadList:
    case Category::UpdateList: case Category::Allocate: case Category::Own:
      return true;
    default:
      return lists_tracked(f.objects, false);  // creates or frees objects
  }
}

}  // namespace

Rule rule_for(const FunctionInfo& f, const Options& o) {
  Rule r;
  if (f.family == Family::kInit || f.family == Family::kFinalize || f.family == Family::kThreadlevel ||
      f.family == Family::kAbort || !(lists_tracked(f.handles) || lists_tracked(f.objects)))
    return r;
  const bool by_default = o.lifetime && object_call(f);
  const bool by_check = o.check != CheckMode::Off &&
                        (f.category == Category::CommIO || f.category == Category::Collective);
  if (!by_default && !by_check) return r;
  r.blocking = f.blocking;
  r.locks = by_default;
  r.freed = freed_kind(f);
  for_each_kind(f.handles, [&](Kind k, std::string_view item) {
    r.creates = r.creates || (tracked(k) && item.find('*') != std::string_view::npos);
  });
  if (r.freed != Kind::kNone) r.access = Access::kFree;
  else if (f.category == Category::UpdateList) r.access = Access::kUpdate;
  else r.access = Access::kRead;
  return r;
}

// A call that reads objects and neither creates, frees nor rewrites a handle: with no object of
// its kinds there is nothing it could find (may_concern_tracked), so it may wait for one.
std::uint32_t kinds_to_wait_for(const FunctionInfo& f, const Rule& r) {
  if (r.access != Access::kRead || r.freed != Kind::kNone || !r.locks) return 0;
  std::uint32_t kinds = 0;
  bool read_only = true;
  for_each_kind(f.handles, [&](Kind k, std::string_view item) {
    if (!tracked(k)) return;
    if (item.find_first_of("*&[") != std::string_view::npos) read_only = false;  // written or an array
    kinds |= kind_bit(k);
  });
  for_each_kind(f.objects, [&](Kind k, std::string_view) { read_only = read_only && !tracked(k); });
  return read_only ? kinds : 0;
}

bool fast_read_applies(const FunctionInfo& f, const Rule& r) {
  return kinds_to_wait_for(f, r) != 0 && !r.blocking &&
         (f.category == Category::AccessOnly || f.category == Category::ReadList);
}

}  // namespace tsmpi::lifetime
