// The collective registry and verification helpers shared by the family files.
#include <algorithm>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"

namespace collbench::coll {

const std::vector<std::unique_ptr<Collective>>& collective_registry() {
  static const std::vector<std::unique_ptr<Collective>> kRegistry = [] {
    std::vector<std::unique_ptr<Collective>> r;
    r.push_back(make_allreduce());
    r.push_back(make_reducescatter());
    r.push_back(make_allgather());
    r.push_back(make_alltoall());
    r.push_back(make_alltoallv());
    r.push_back(make_broadcast());
    r.push_back(make_sendrecv());
    r.push_back(make_moe_dispatch());
    r.push_back(make_moe_combine());
    r.push_back(make_moe_roundtrip());
    r.push_back(make_ep_dp_concurrent());
    return r;
  }();
  return kRegistry;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& c : collective_registry()) names.emplace_back(c->name());
  return names;
}

const Collective& find_collective(std::string_view name) {
  for (const auto& c : collective_registry()) {
    if (c->name() == name) return *c;
  }
  throw InputError(unknown_name_message("collective", name, collective_names()));
}

std::uint64_t count_wrong_reduce(const void* result, std::size_t elems, std::uint64_t first_global_elem,
                                 const CaseContext& ctx) {
  const ReducePattern p = reduce_pattern(ctx.redop, ctx.dtype, ctx.num_ranks);
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < elems; ++i) {
    const double expected = reduce_expected(p, ctx.redop, ctx.num_ranks, first_global_elem + i);
    if (load_element(result, i, ctx.dtype) != expected) ++wrong;
  }
  return wrong;
}

std::uint64_t count_wrong_moved(const void* result, std::size_t elems, Dtype dtype, int src, int dst,
                                std::uint64_t first_src_elem) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < elems; ++i) {
    if (load_element(result, i, dtype) != move_value(dtype, src, dst, first_src_elem + i)) ++wrong;
  }
  return wrong;
}

}  // namespace collbench::coll
