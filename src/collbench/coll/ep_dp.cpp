// ep-dp-concurrent: the two exchanges of MoE training that share a step, at the same time.
// Every rank runs an all-to-all of `bytes` (the all-to-all convention: the per-rank send total,
// m blocks) inside its domain (expert parallelism over NVLink) AND an all-reduce of `dp_bytes`
// (the all-reduce convention: the per-rank buffer; default: the requested bytes) across domains,
// between the ranks with the same local index in every domain (data parallelism over the
// scale-out NICs), issued together as one group (Comm::group_start/group_end) on the levels of
// the runner's HierarchicalComm. Side operations ep_alone and dp_alone time each part on its own,
// so the record carries t_ep, t_dp, t_both and interference = t_both / max(t_ep, t_dp)
// (docs/acceptance.md, docs/model.md).
//
// Buffers: send = [all-to-all input: m blocks][all-reduce input: dp elements], recv the same
// layout; in place, both parts work in place on their own regions of the one buffer.
// Needs at least two domains of equal size (waived otherwise, with the reason).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"

namespace collbench::coll {
namespace {

const std::string_view kName = to_string(CollectiveId::ep_dp_concurrent);
constexpr const char* kDpBytes = "dp_bytes";

// Where this rank sits: m ranks per domain, D domains, its domain and local index.
struct Levels {
  int domain_size = 1;
  int num_domains = 1;
  int domain = 0;
  int local = 0;
  int first_rank = 0;  // global rank of local index 0 of this rank's domain
};

Levels levels_of(const CaseContext& ctx) {
  Levels l;
  const Placement& p = ctx.placement;
  if (p.num_domains() == 0) {
    l.domain_size = ctx.num_ranks;
    l.local = ctx.rank;
    return l;
  }
  l.num_domains = p.num_domains();
  l.domain = p.domain_of(ctx.rank);
  l.first_rank = p.domain_offset(l.domain);
  l.domain_size = p.domain_sizes[static_cast<std::size_t>(l.domain)];
  l.local = ctx.rank - l.first_rank;
  return l;
}

std::optional<std::uint64_t> dp_bytes_param(const std::map<std::string, std::string>* params) {
  if (params == nullptr) return std::nullopt;
  const auto it = params->find(kDpBytes);
  if (it == params->end()) return std::nullopt;
  return parse_bytes(it->second);
}

struct EpDpDetail final : ShapeDetail {
  Levels levels;
  std::size_t per_peer = 0;  // all-to-all block, elements
  std::size_t ep_elems = 0;  // m x per_peer
  std::size_t dp_elems = 0;  // all-reduce buffer, elements
};

const EpDpDetail& ep_dp_detail_of(const Shape& s) {
  const auto* d = dynamic_cast<const EpDpDetail*>(s.detail.get());
  if (d == nullptr) throw std::logic_error("ep-dp-concurrent: shape without its detail");
  return *d;
}

// The all-reduce's rank space: the ranks with this local index, one per domain.
CaseContext dp_context(const CaseContext& ctx, const Levels& l) {
  CaseContext c = ctx;
  c.rank = l.domain;
  c.num_ranks = l.num_domains;
  c.placement = placement_from_sizes(l.num_domains, {l.num_domains});
  return c;
}

class EpDpConcurrent final : public Collective {
 public:
  EpDpConcurrent() : Collective(CollectiveId::ep_dp_concurrent) {}
  [[nodiscard]] std::string_view description() const override {
    return "EP all-to-all inside every domain concurrently with DP all-reduce across domains (dp_bytes)";
  }
  [[nodiscard]] bool uses_levels() const override { return true; }

  void check_params(const std::map<std::string, std::string>& params) const override {
    for (const auto& [key, value] : params) {
      if (key != kDpBytes) {
        throw InputError(fmt::format("{}: unknown parameter '{}'; accepted: {}", kName, key, kDpBytes));
      }
      std::uint64_t bytes = 0;
      try {
        bytes = parse_bytes(value);
      } catch (const InputError& e) {
        throw InputError(fmt::format("{} '{}': {}", kDpBytes, value, e.what()));
      }
      if (bytes == 0)
        throw InputError(fmt::format("{} '{}': must be at least one element (e.g. 16M)", kDpBytes, value));
    }
  }

  [[nodiscard]] std::optional<std::string> waiver(const CaseContext& ctx) const override {
    if (ctx.algo != "auto") {
      return fmt::format(
          "{} runs the library's own all-to-all and all-reduce on the two levels; --algo {} does not "
          "apply (use auto)",
          kName, ctx.algo);
    }
    const Placement& p = ctx.placement;
    if (p.num_domains() < 2) {
      return fmt::format(
          "{} needs at least 2 domains (all-to-all inside each, all-reduce across them); this "
          "placement has one domain of {} ranks (set --ranks-per-domain or --domain-sizes)",
          kName, ctx.num_ranks);
    }
    if (!p.interleaved.empty()) {
      return fmt::format(
          "{} needs rack-major ranks (each domain a contiguous block of ranks: fill and verify name "
          "peers by offset in the domain); this placement interleaves domains",
          kName);
    }
    if (!p.uniform()) {
      std::vector<std::string> sizes;
      for (int s : p.domain_sizes) sizes.push_back(std::to_string(s));
      return fmt::format(
          "{} needs equal domain sizes (the all-reduce joins the ranks with the same local index in "
          "every domain); the placement is uneven: {}",
          kName, join(sizes, ","));
    }
    if (const auto dp = dp_bytes_param(ctx.params); dp && *dp < dtype_size(ctx.dtype)) {
      return fmt::format("dp_bytes {} is smaller than one {} element", *dp, to_string(ctx.dtype));
    }
    return std::nullopt;
  }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int rank, int num_ranks) const override {
    CaseContext ctx;
    ctx.dtype = dtype;
    ctx.rank = rank;
    ctx.num_ranks = num_ranks;
    ctx.placement = placement_from_sizes(num_ranks, {num_ranks});
    return shape_for(requested_bytes, ctx);
  }

  [[nodiscard]] Shape shape_for(std::uint64_t requested_bytes, const CaseContext& ctx) const override {
    auto d = std::make_shared<EpDpDetail>();
    d->levels = levels_of(ctx);
    const std::uint64_t elem = dtype_size(ctx.dtype);
    const auto m = static_cast<std::uint64_t>(d->levels.domain_size);
    d->per_peer = aligned_chunk_elems(requested_bytes / elem, m, elem);
    d->ep_elems = d->per_peer * m;
    d->dp_elems = dp_bytes_param(ctx.params).value_or(requested_bytes) / elem;
    Shape s;
    s.count = d->ep_elems;
    s.bytes = s.count * elem;
    s.send_elems = s.recv_elems = d->ep_elems + d->dp_elems;
    s.bytes_per_rank_send = s.bytes_per_rank_recv = (d->ep_elems + d->dp_elems) * elem;
    s.detail = std::move(d);
    return s;
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    const EpDpDetail& d = ep_dp_detail_of(s);
    const Levels& l = d.levels;
    for (int j = 0; j < l.domain_size; ++j) {
      for (std::size_t i = 0; i < d.per_peer; ++i) {
        store_element(host_send, static_cast<std::size_t>(j) * d.per_peer + i, ctx.dtype,
                      move_value(ctx.dtype, ctx.rank, l.first_rank + j, i));
      }
    }
    const CaseContext dp = dp_context(ctx, l);
    const ReducePattern p = reduce_pattern(dp.redop, dp.dtype, dp.num_ranks);
    const std::uint64_t first = static_cast<std::uint64_t>(l.local) * d.dp_elems;  // each rail its own values
    for (std::size_t i = 0; i < d.dp_elems; ++i) {
      store_element(host_send, d.ep_elems + i, ctx.dtype, reduce_input(p, dp.redop, dp.rank, dp.num_ranks, first + i));
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    const EpDpDetail& d = ep_dp_detail_of(s);
    const Levels& l = d.levels;
    const auto elem = dtype_size(ctx.dtype);
    std::uint64_t wrong = 0;
    for (int src = 0; src < l.domain_size; ++src) {
      const auto* block = static_cast<const char*>(result) + static_cast<std::size_t>(src) * d.per_peer * elem;
      wrong += count_wrong_moved(block, d.per_peer, ctx.dtype, l.first_rank + src, ctx.rank, 0);
    }
    const auto* reduced = static_cast<const char*>(result) + d.ep_elems * elem;
    wrong +=
        count_wrong_reduce(reduced, d.dp_elems, static_cast<std::uint64_t>(l.local) * d.dp_elems, dp_context(ctx, l));
    return wrong;
  }

  void launch(backend::Comm& comm, const void* send, void* recv, const Shape& s,
              const CaseContext& ctx) const override {
    const EpDpDetail& d = ep_dp_detail_of(s);
    backend::Comm& domain = level(comm.domain_level());
    backend::Comm& cross = level(comm.cross_level());
    Group group(comm);
    ep(domain, send, recv, d, ctx);
    dp(cross, send, recv, d, ctx);
    group.end();
  }

  [[nodiscard]] std::vector<std::string> side_operations(const Shape& /*shape*/) const override {
    return {"ep_alone", "dp_alone"};
  }

  void launch_side(std::string_view op, backend::Comm& comm, const void* send, void* recv, const Shape& s,
                   const CaseContext& ctx) const override {
    const EpDpDetail& d = ep_dp_detail_of(s);
    if (op == "ep_alone") {
      ep(level(comm.domain_level()), send, recv, d, ctx);
    } else if (op == "dp_alone") {
      dp(level(comm.cross_level()), send, recv, d, ctx);
    } else {
      throw std::logic_error("ep-dp-concurrent: unknown side operation " + std::string(op));
    }
  }

  [[nodiscard]] std::vector<ConcurrentPart> concurrent_parts(const Shape& s, const CaseContext& ctx) const override {
    const EpDpDetail& d = ep_dp_detail_of(s);
    const Levels& l = d.levels;
    ConcurrentPart ep_part;
    ep_part.name = "ep";
    ep_part.collective = to_string(CollectiveId::alltoall);
    ep_part.bytes = s.bytes;
    ep_part.ranks = l.domain_size;
    ep_part.placement = ctx.placement;  // one all-to-all in every domain at once
    ep_part.scope = Scope::domain;
    ConcurrentPart dp_part;
    dp_part.name = "dp";
    dp_part.collective = to_string(CollectiveId::allreduce);
    dp_part.bytes = d.dp_elems * dtype_size(ctx.dtype);
    dp_part.ranks = l.num_domains;
    // One rank per domain: every hop crosses the scale-out network (m such all-reduces at once,
    // one per local index, each on its own rank's share of the NICs).
    dp_part.placement =
        placement_from_sizes(l.num_domains, std::vector<int>(static_cast<std::size_t>(l.num_domains), 1));
    dp_part.scope = Scope::global;
    return {ep_part, dp_part};
  }

  [[nodiscard]] std::string size_label(const Shape& s, const CaseContext& ctx) const override {
    if (s.detail == nullptr) {  // a waived case has no shape: the parameter as given, if any
      const auto dp = dp_bytes_param(ctx.params);
      return dp ? fmt::format("dp_bytes={}", *dp) : std::string();
    }
    return fmt::format("dp_bytes={}", ep_dp_detail_of(s).dp_elems * dtype_size(ctx.dtype));
  }

 private:
  // group_start .. end, with the end guaranteed when an operation throws inside the group.
  class Group {
   public:
    explicit Group(backend::Comm& comm) : comm_(comm) { comm_.group_start(); }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() {
      if (!open_) return;
      try {
        comm_.group_end();
      } catch (...) {  // already unwinding from the first error
      }
    }
    void end() {
      open_ = false;
      comm_.group_end();
    }

   private:
    backend::Comm& comm_;
    bool open_ = true;
  };

  static backend::Comm& level(backend::Comm* c) {
    if (c == nullptr) {
      throw RuntimeFailure("ep-dp-concurrent needs a communicator with levels (domain and cross-domain)");
    }
    return *c;
  }
  static void ep(backend::Comm& domain, const void* send, void* recv, const EpDpDetail& d, const CaseContext& ctx) {
    domain.run({.op = NcclOp::alltoall, .dtype = ctx.dtype, .send = send, .recv = recv, .count = d.per_peer});
  }
  static void dp(backend::Comm& cross, const void* send, void* recv, const EpDpDetail& d, const CaseContext& ctx) {
    const std::size_t off = d.ep_elems * dtype_size(ctx.dtype);
    const auto* s = static_cast<const char*>(send) + off;
    auto* r = static_cast<char*>(recv) + off;
    cross.run(
        {.op = NcclOp::allreduce, .dtype = ctx.dtype, .redop = ctx.redop, .send = s, .recv = r, .count = d.dp_elems});
  }
};

}  // namespace

namespace {
const bool kEpDpRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<EpDpConcurrent>()); });
}  // namespace

}  // namespace collbench::coll
