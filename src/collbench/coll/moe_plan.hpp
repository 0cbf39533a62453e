// Host-side plumbing of the MoE harness (moe-dispatch, moe-combine, moe-roundtrip; moe.cpp):
// case parameters, the cached routing of a run, and the byte layout of every buffer region and
// exchange stage of one rank, for the flat and the hierarchical algorithm. Pure C++ (no MPI,
// no GPU): the unit tests check the counts and offsets here; moe.cpp fills, launches and
// verifies with them.
//
// Buffers (bytes; every region starts at a multiple of 8, rows move in 4-byte units):
//   send: [dispatch counts: n x int64][dispatch rows][combine rows]
//   recv: [received counts: n x int64][dispatch final][dispatch staging][combine final][combine staging]
// Regions an operation does not use are empty (moe-combine has no counts and no dispatch rows).
//
// A row block is the run of rows of one (source, destination) pair of the routing, in the order
// rows_for_destination() lists them (token order; copy rows in choice order); dispatch blocks
// carry dispatch rows from source to destination, combine blocks carry the destination's combine
// rows for the source's tokens back to the source.
//
// Flat (one all-to-all-v over the case's communicator): the send rows are in destination order
// (dispatch) or source order (combine), the final region in source order (dispatch) or expert
// rank order (combine).
// Hierarchical (equal domains of m ranks, D domains; rank (d, l) = local index l of domain d):
//   dispatch  stage 1, D all-to-all-v inside the domain (one per destination domain d'): rank
//             (d, l) hands the rows bound for (d', l') to its domain peer (d, l'), which
//             aggregates the rows of the whole domain for (d', l') in its staging region,
//             ordered [d'][source l];
//             stage 2, one all-to-all-v between the ranks with the same local index (one
//             exchange per domain pair and rail): (d, l') sends (d', l') the aggregated block,
//             which lands in the final region in source order [d][l].
//   combine   the reverse: stage 1 across domains (expert rank (d', l') returns to (d, l') the
//             rows of every source of domain d), staging ordered [expert domain d'][source l];
//             stage 2, D all-to-all-v inside the domain scatter them to the sources, whose
//             final region is in expert-rank order [d'][l'].
// Rows for the rank's own domain take the same path; their stage-2 hop is a self copy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collbench/coll/input_row_gather.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/workload/payload.hpp"
#include "collbench/workload/profile.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::coll {

enum class MoeOp : std::uint8_t { dispatch, combine, roundtrip };
enum class MoeAlgo : std::uint8_t { flat, hierarchical };

// Bytes of the unit rows travel in (int32 elements): row sizes must be multiples of it.
inline constexpr std::uint64_t kMoeCarrierBytes = 4;

// Keys a moe case accepts in Case.params (sweep keys and `collbench run` flags).
const std::vector<std::string>& moe_param_keys();

// The case's parameters, validated (InputError naming the key). Unset keys keep the profile's.
struct MoeParams {
  std::string workload = "deepseek-v3";  // profile name or file
  std::optional<int> tokens;             // tokens per rank (T)
  std::string routing;                   // flow-YAML map of routing settings ("" = none)
  std::optional<int> ep_size;            // ranks per EP group
  std::optional<std::string> imbalance;  // target max/mean receive load (sets sigma)
  std::optional<std::string> seed;
  std::optional<workload::RowConvention> rows;  // copy | dedup
  bool counts_timed = true;                     // counts_exchange: timed | untimed
};
MoeParams parse_moe_params(const std::map<std::string, std::string>& params);

// The profile with every override applied, and the routing configuration for n ranks.
struct MoeConfig {
  workload::WorkloadProfile profile;  // routing and rows overridden
  workload::RoutingConfig routing;
  bool counts_timed = true;
};
MoeConfig moe_config(const MoeParams& params, int num_ranks);

// Checks the parameters before a run (InputError naming the key): the profile and overrides, and
// the routing's structure (expert split, group limit, replicas) on one EP group. What depends on
// the run's rank count (whole EP groups) becomes a waiver; an unreachable imbalance target is
// found when the run resolves it.
void check_moe_params(const MoeParams& params);

// Everything about a run's routing that does not depend on the rank: the generator, the counts
// matrix and the payload rules. Cached, shared by the shapes of every rank and operation. Built
// from counts shared over the processes (share_moe_counts: each routed its own tokens) when they
// are there, else by routing every token of every rank here (about 1 us per token: 1,024 ranks
// x 4,096 tokens are seconds on every rank).
struct MoeWorkload {
  MoeConfig config;
  workload::RoutingGenerator generator;
  // Of the profile's row convention only (n x n: 8 MB at 1,024 ranks).
  std::shared_ptr<const workload::CountsMatrix> counts;
  bool counts_shared = false;  // from share_moe_counts, not routed here
  workload::RowConvention rows = workload::RowConvention::dedup;
  std::int64_t dispatch_row_bytes = 0;
  std::int64_t combine_row_bytes = 0;
  int dispatch_max_value = workload::kMaxRowValue;  // row_signature values lie in [1, this]
  workload::CombineRule combine_rule;

  // The EP group size when every non-zero count lies inside blocks of that many consecutive
  // ranks and there are several blocks (the flat exchange then runs per group), else 0.
  int exchange_group = 0;

  // `shared`: the counts matrix of this configuration gathered from the processes; null: route
  // every rank's tokens here.
  explicit MoeWorkload(MoeConfig c, std::shared_ptr<const workload::CountsMatrix> shared = nullptr);
  [[nodiscard]] const workload::CountsMatrix& matrix() const { return *counts; }
  [[nodiscard]] int num_ranks() const { return config.routing.num_ranks; }
};
std::shared_ptr<const MoeWorkload> moe_workload(const MoeParams& params, int num_ranks);

// Shares the counts matrix of these parameters over the processes (Collective::share_inputs):
// each process routes the source ranks `gather` gives it and the rows are gathered, so that
// moe_workload builds the workload from them instead of routing every rank's tokens on every
// rank. Collective over the gather's processes, which call it with the same arguments in the
// same order; nothing happens (on every process alike) when these counts are already shared,
// since only this function changes the store of shared counts (the last 4).
void share_moe_counts(const MoeParams& params, int num_ranks, RowGather& gather);

// The tokens per rank a case of `requested_bytes` gets when its parameters leave them open
// (shape(): as many dispatch rows as fit), and the parameters with them set.
MoeParams case_moe_params(std::uint64_t requested_bytes, const std::map<std::string, std::string>* params,
                          int num_ranks);

// Why a moe case cannot run on this communicator (a waived record), or nullopt.
std::optional<std::string> moe_waiver(const MoeParams& params, MoeAlgo algo, int num_ranks, const Placement& placement);

// A run of rows of one routing pair at a byte offset of a buffer.
struct RowBlock {
  bool combine = false;  // combine rows (destination's outputs for the source) or dispatch rows
  int src_rank_idx = 0;  // the pair in the dispatch direction: token owner...
  int dst_rank_idx = 0;  // ...and expert rank
  std::int64_t rows = 0;
  std::uint64_t offset = 0;  // bytes from the start of the buffer
};

// One all-to-all-v on one communicator level; counts and displacements in 4-byte units,
// relative to the region starts.
struct ExchangeStage {
  enum class Level : std::uint8_t { comm, domain, cross } level = Level::comm;
  bool send_from_recv = false;    // reads the recv buffer (a staging region) instead of send
  std::uint64_t send_region = 0;  // bytes from the start of the send (or recv) buffer
  std::uint64_t recv_region = 0;  // bytes from the start of the recv buffer
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
  // When the routing keeps every row inside EP groups smaller than the communicator: for a flat
  // stage the peers [group_first, group_first + group_size) of this rank's group, for a cross
  // stage the group's domains (indices on the cross communicator, which is ordered by domain);
  // the only entries with non-zero counts either way. The exchange then runs on that block of
  // the stage's communicator (Comm::block_level) with these entries of the arrays. 0: the whole
  // communicator of the stage's level.
  int group_first = 0;
  int group_size = 0;
};

// The exchanges of one direction and the blocks they read and leave.
struct ExchangePlan {
  std::vector<ExchangeStage> stages;
  std::vector<RowBlock> send_blocks;     // what fill writes into the send buffer
  std::vector<RowBlock> final_blocks;    // where the rows end up (recv buffer)
  std::vector<RowBlock> staging_blocks;  // hierarchical: the aggregated rows at the forwarder
};

// One rank's layout of a case.
struct MoeLayout {
  int rank_idx = 0;
  int num_ranks = 0;
  MoeOp op = MoeOp::dispatch;
  MoeAlgo algo = MoeAlgo::flat;
  bool has_counts = false;         // dispatch and roundtrip exchange counts
  std::uint64_t counts_bytes = 0;  // n x 8 at offset 0 of both buffers (when has_counts)
  // The EP group the counts and flat stages are exchanged in (ExchangeStage::group_first/size;
  // group_size 0: the whole communicator). Only the group's count entries travel.
  int group_first = 0;
  int group_size = 0;
  std::uint64_t send_bytes = 0;  // total send buffer bytes
  std::uint64_t recv_bytes = 0;  // total recv buffer bytes
  ExchangePlan dispatch;         // empty for moe-combine
  ExchangePlan combine;          // empty for moe-dispatch
};

// The layout of rank `rank_idx` for a counts matrix (rows, [src][dst]) and row sizes. The
// hierarchical algorithm needs a placement of equal domains (InputError otherwise). A flat layout
// with `group_size` > 0 exchanges counts and rows inside the rank's block of group_size ranks;
// the caller vouches that the matrix is confined to such blocks (confined_group, computed once
// per workload: O(n^2)). A hierarchical layout is confined likewise when the group is whole
// domains of consecutive ranks: counts inside the group, the domain stages of the group's
// domains only, the cross stage among the group's domains; else it spans the communicator.
MoeLayout moe_layout(const workload::CountsMatrix& counts, std::int64_t dispatch_row_bytes,
                     std::int64_t combine_row_bytes, MoeOp op, MoeAlgo algo, int rank_idx, const Placement& placement,
                     int group_size = 0);

// `group_size` when it is smaller than the matrix's rank count, divides it, and every non-zero
// entry lies inside a block of group_size consecutive ranks; else 0 (one exchange over all).
int confined_group(const workload::CountsMatrix& counts, int group_size);

// Bytes each rank sends each other rank in one launch, in the direction they travel
// (combine: expert rank -> token owner; roundtrip: both directions summed).
model::TrafficMatrix moe_traffic(const workload::CountsMatrix& counts, std::int64_t dispatch_row_bytes,
                                 std::int64_t combine_row_bytes, MoeOp op);

// summarize_traffic(moe_traffic(...), placement) without the n x n traffic matrix: O(n x block)
// for a block-diagonal counts matrix.
model::TrafficSummary moe_traffic_summary(const workload::CountsMatrix& counts, std::int64_t dispatch_row_bytes,
                                          std::int64_t combine_row_bytes, MoeOp op, const Placement& placement);

CollectiveId collective_id_of(MoeOp op);
std::string_view to_string(MoeOp op);
MoeOp moe_op_of(std::string_view collective);  // "moe-dispatch" -> dispatch, ...
MoeAlgo moe_algo_of(std::string_view algo);    // hierarchical, else flat

// The placement of the case's communicator: `p` when it describes n ranks, else one domain.
Placement moe_placement(const Placement& p, int num_ranks);

}  // namespace collbench::coll
