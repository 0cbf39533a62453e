// The collective registry and verification helpers shared by the family files.
#include <fmt/format.h>

#include <algorithm>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"

namespace collbench::coll {

namespace {

std::vector<CollectiveFactory>& factories() {
  static std::vector<CollectiveFactory> registered;
  return registered;
}

// A family's place: its row in the fact table.
std::size_t table_position(const Collective& c) {
  const auto facts = all_collective_facts();
  return static_cast<std::size_t>(&c.facts() - facts.data());
}

}  // namespace

bool register_collective(CollectiveFactory make) {
  factories().push_back(make);
  return true;
}

const std::vector<std::unique_ptr<Collective>>& collective_registry() {
  static const std::vector<std::unique_ptr<Collective>> kRegistry = [] {
    std::vector<std::unique_ptr<Collective>> r;
    for (const CollectiveFactory make : factories()) r.push_back(make());
    std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return table_position(*a) < table_position(*b); });
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

void Collective::launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                        const CaseContext& ctx) const {
  const auto op = operation(send, recv, shape, ctx);
  if (!op) throw RuntimeFailure(fmt::format("{}: the family defines neither operation() nor launch()", name()));
  comm.run(*op);
}

backend::BoundCall Collective::bind_launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                                           const CaseContext& ctx) const {
  if (const auto op = operation(send, recv, shape, ctx)) return comm.bind(*op);
  return backend::BoundCall::of<&call_launch>(LaunchArgs{this, &comm, send, recv, &shape, &ctx});
}

Shape whole_buffer_shape(std::uint64_t requested_bytes, Dtype dtype) {
  Shape s;
  const std::uint64_t elem = dtype_size(dtype);
  s.count = requested_bytes / elem;
  s.bytes = s.count * elem;
  s.send_elems = s.recv_elems = s.count;
  s.bytes_per_rank_send = s.bytes_per_rank_recv = s.bytes;
  return s;
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
