// send/recv: by default in a ring (every rank sends its buffer to rank+1 and receives from
// rank-1 at once, as nccl-tests); with `pairing: round-robin` or `rail`, one round of disjoint
// pairs exchanging both ways (sendrecv.hpp). S = buffer; busbw = algbw (factor 1).
#include "collbench/coll/sendrecv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"

namespace collbench::coll {
namespace {

std::string param(const std::map<std::string, std::string>* params, const std::string& key, std::string fallback) {
  if (params == nullptr) return fallback;
  const auto it = params->find(key);
  return it == params->end() ? fallback : it->second;
}

int parse_round(const std::string& text) {
  int value = -1;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), value);
  if (res.ec != std::errc{} || res.ptr != text.data() + text.size() || value < 0) {
    throw InputError(fmt::format("sendrecv: round '{}' is not an integer >= 0", text));
  }
  return value;
}

// The ranks of each domain, in rank order (rack-major or interleaved placements alike).
std::vector<std::vector<int>> domain_members(const Placement& placement, int num_ranks) {
  std::vector<std::vector<int>> members(static_cast<std::size_t>(std::max(placement.num_domains(), 1)));
  for (int r = 0; r < num_ranks; ++r) {
    const int d = placement.num_domains() > 0 ? placement.domain_of(r) : 0;
    members[static_cast<std::size_t>(d)].push_back(r);
  }
  return members;
}

int rail_partner(const CaseContext& ctx, int round) {
  const auto members = domain_members(ctx.placement, ctx.num_ranks);
  const int num_domains = static_cast<int>(members.size());
  const int mine = ctx.placement.num_domains() > 0 ? ctx.placement.domain_of(ctx.rank) : 0;
  const auto& own = members[static_cast<std::size_t>(mine)];
  const auto local = static_cast<std::size_t>(std::find(own.begin(), own.end(), ctx.rank) - own.begin());
  const int other = round_robin_partner(mine, round, num_domains);
  if (other == mine) return ctx.rank;
  const auto& theirs = members[static_cast<std::size_t>(other)];
  return local < theirs.size() ? theirs[local] : ctx.rank;  // uneven domains: no rank on that rail
}

class SendRecv final : public Collective {
 public:
  SendRecv() : Collective(CollectiveId::sendrecv) {}
  [[nodiscard]] std::string_view description() const override {
    return "send to rank+1, receive from rank-1 (pairing: ring); or one round of disjoint pairs (round-robin, rail)";
  }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int /*n*/) const override {
    return whole_buffer_shape(requested_bytes, dtype);
  }

  void check_params(const std::map<std::string, std::string>& params) const override { check_sendrecv_params(params); }

  [[nodiscard]] std::optional<std::string> waiver(const CaseContext& ctx) const override {
    if (param(ctx.params, "pairing", "ring") == "rail" && ctx.placement.num_domains() < 2) {
      return std::string("rail pairing exchanges between domains: it needs scope global and two or more domains");
    }
    return std::nullopt;
  }

  [[nodiscard]] std::string size_label(const Shape& /*shape*/, const CaseContext& ctx) const override {
    const std::string pairing = param(ctx.params, "pairing", "ring");
    if (pairing == "ring") return {};
    return fmt::format("{}-round{}", pairing, param(ctx.params, "round", "0"));
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    const int dst = sendrecv_peers(ctx).send_to;
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, move_value(ctx.dtype, ctx.rank, dst, i));
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    const int src = sendrecv_peers(ctx).recv_from;
    return count_wrong_moved(result, s.recv_elems, ctx.dtype, src, ctx.rank, 0);
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    const SendRecvPeers p = sendrecv_peers(ctx);
    return backend::Operation{.op = NcclOp::sendrecv,
                              .dtype = ctx.dtype,
                              .send_peer = p.send_to,
                              .recv_peer = p.recv_from,
                              .send = send,
                              .recv = recv,
                              .count = s.count};
  }
};

}  // namespace

const std::vector<std::string>& sendrecv_pairings() {
  static const std::vector<std::string> kPairings{"ring", "round-robin", "rail"};
  return kPairings;
}

void check_sendrecv_params(const std::map<std::string, std::string>& params) {
  const std::string pairing = param(&params, "pairing", "ring");
  const auto& known = sendrecv_pairings();
  if (std::find(known.begin(), known.end(), pairing) == known.end()) {
    throw InputError("sendrecv: " + unknown_name_message("pairing", pairing, known));
  }
  const auto round = params.find("round");
  if (pairing == "ring" && round != params.end()) {
    throw InputError("sendrecv: 'round' applies to pairing round-robin or rail, not ring");
  }
  if (round != params.end()) parse_round(round->second);
}

SendRecvPeers sendrecv_peers(const CaseContext& ctx) {
  const std::string pairing = param(ctx.params, "pairing", "ring");
  const int n = ctx.num_ranks;
  if (pairing == "ring") return {(ctx.rank + 1) % n, (ctx.rank + n - 1) % n};
  const int round = parse_round(param(ctx.params, "round", "0"));
  const int partner = pairing == "rail" ? rail_partner(ctx, round) : round_robin_partner(ctx.rank, round, n);
  return {partner, partner};
}

namespace {
const bool kSendrecvRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<SendRecv>()); });
}  // namespace

}  // namespace collbench::coll
