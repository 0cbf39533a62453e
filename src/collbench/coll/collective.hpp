// A collective family's traits: its facts (name, byte convention, busbw factor, ...: one row of
// core/collective_facts.cpp), buffer shapes, how to fill inputs so that results are exactly
// known, how to verify, and how to launch it on any backend communicator. One file per family
// (allreduce.cpp, alltoall.cpp, ...) defines one subclass; registry.cpp lists them. A new
// collective is one new file, a row of facts and its tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/operation.hpp"
#include "collbench/coll/input_row_gather.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/redop.hpp"
#include "collbench/model/traffic.hpp"

namespace collbench::coll {

// Family-specific state that a shape carries to fill, verify and launch (MoE: the routing, row
// layouts and buffer regions of the case). Immutable once the shape exists.
struct ShapeDetail {
  virtual ~ShapeDetail() = default;
};

// Sizes of one case on one communicator, from the rank's point of view.
struct Shape {
  std::uint64_t bytes = 0;     // nccl-tests convention (docs/hardware-context.md section 3), after rounding down
  std::uint64_t count = 0;     // elements as nccl-tests prints them
  std::size_t send_elems = 0;  // out-of-place send buffer
  std::size_t recv_elems = 0;  // out-of-place recv buffer
  std::uint64_t bytes_per_rank_send = 0;  // bytes this rank sends (incl. to itself)
  std::uint64_t bytes_per_rank_recv = 0;
  std::optional<std::uint64_t> bytes_max_rank;       // all-to-all-v: max over ranks of send/recv
  std::optional<std::uint64_t> bytes_logical_total;  // all-to-all-v: bytes sent by all ranks together
  // all-to-all-v: this rank's per-peer counts and displacements, in elements.
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
  // Family-specific state (null for the regular families).
  std::shared_ptr<const ShapeDetail> detail;

  [[nodiscard]] std::size_t in_place_elems() const { return send_elems > recv_elems ? send_elems : recv_elems; }
};

// One of several operations that a family runs at the same time (ep-dp-concurrent), as the
// model and the record see it: the operation on its own ranks, bounded like any case.
struct ConcurrentPart {
  std::string name;         // "ep", "dp": record keys <name>_alone_us, ...; side operation <name>_alone
  std::string collective;   // the operation as the model knows it: alltoall, allreduce
  std::uint64_t bytes = 0;  // in that collective's byte convention
  int ranks = 0;            // ranks of one instance (its communicator)
  Placement placement;      // the instances' ranks, for the model (domains of one rank: across domains)
  Scope scope = Scope::global;
};

struct CaseContext {
  Dtype dtype = Dtype::float32;
  Redop redop = Redop::sum;
  int rank = 0;
  int num_ranks = 1;
  bool in_place = false;
  int root = 0;
  // The case's collective-specific parameters (plan::Case::params: MoE workload, tokens, routing,
  // ...); null when there are none.
  const std::map<std::string, std::string>* params = nullptr;
  std::string algo = "auto";  // algo_requested
  // Domains of the communicator's ranks (rank-space of `rank`/`num_ranks`); empty = one domain.
  Placement placement;
};

class Collective {
 public:
  explicit Collective(CollectiveId id) : facts_(collective_facts(id)) {}
  virtual ~Collective() = default;
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;
  // The family's facts (core/collective_facts.hpp): name, byte convention, busbw factor, ...
  [[nodiscard]] const CollectiveFacts& facts() const { return facts_; }
  [[nodiscard]] CollectiveId id() const { return facts_.id; }
  [[nodiscard]] std::string_view name() const { return facts_.name; }
  [[nodiscard]] virtual std::string_view description() const = 0;
  // What `bytes` means for this family (printed by --list and in docs).
  [[nodiscard]] std::string_view bytes_convention() const { return facts_.bytes_convention; }
  [[nodiscard]] bool has_redop() const { return facts_.reduces; }
  [[nodiscard]] bool supports_in_place() const { return facts_.in_place; }
  // busbw = algbw x factor(n) (nccl-tests conventions; n = the communicator's rank count).
  [[nodiscard]] double busbw_factor(int num_ranks) const { return collbench::busbw_factor(facts_.busbw, num_ranks); }
  [[nodiscard]] virtual Shape shape(std::uint64_t requested_bytes, Dtype dtype, int rank, int num_ranks) const = 0;
  // The shape with the case's parameters and placement (ctx.params, ctx.algo, ctx.placement).
  // Families without parameters use shape(); the runner always calls this one.
  [[nodiscard]] virtual Shape shape_for(std::uint64_t requested_bytes, const CaseContext& ctx) const {
    return shape(requested_bytes, ctx.dtype, ctx.rank, ctx.num_ranks);
  }
  // Families whose payload type is fixed by their parameters (MoE: the workload's wire format)
  // return it; the runner records and runs the case with it instead of the requested dtype.
  [[nodiscard]] virtual std::optional<Dtype> case_dtype(const std::map<std::string, std::string>& /*params*/) const {
    return std::nullopt;
  }
  // Checks the parameters up front (InputError naming the bad key or value); pure.
  virtual void check_params(const std::map<std::string, std::string>& /*params*/) const {}
  // Why this case cannot run here (a waived record with the reason), or nullopt; pure.
  [[nodiscard]] virtual std::optional<std::string> waiver(const CaseContext& /*ctx*/) const { return std::nullopt; }

  // Writes this rank's input (shape.send_elems elements) into host memory.
  virtual void fill(void* host_send, const Shape& shape, const CaseContext& ctx) const = 0;
  // In place: element offset in the single buffer where the input is placed, and where the
  // result is found after the launch.
  [[nodiscard]] virtual std::size_t in_place_input_offset(const Shape&, const CaseContext&) const { return 0; }
  [[nodiscard]] virtual std::size_t in_place_result_offset(const Shape&, const CaseContext&,
                                                           const backend::Comm&) const {
    return 0;
  }
  // Counts wrong elements in this rank's result (shape.recv_elems elements of host memory).
  [[nodiscard]] virtual std::uint64_t verify(const void* host_result, const Shape& shape,
                                             const CaseContext& ctx) const = 0;

  // The one library operation a launch is (backend/operation.hpp), for the families that are
  // one operation on one communicator; nullopt for the families made of several (MoE, EP||DP),
  // which override launch() instead.
  [[nodiscard]] virtual std::optional<backend::Operation> operation(const void* /*send*/, void* /*recv*/,
                                                                    const Shape& /*shape*/,
                                                                    const CaseContext& /*ctx*/) const {
    return std::nullopt;
  }
  // One launch: operation() on the communicator (Comm::run) by default.
  virtual void launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                      const CaseContext& ctx) const;
  // launch() bound once to its arguments, the timed loop's launch target (run/measure.cpp): the
  // communicator's bound form of operation() (Comm::bind: its arguments converted once) where
  // there is one, else launch() through the bound call. Buffers, shape and ctx must outlive it.
  [[nodiscard]] virtual backend::BoundCall bind_launch(backend::Comm& comm, const void* send, void* recv,
                                                       const Shape& shape, const CaseContext& ctx) const;

  // Communication stages of one launch for the overlap pipeline (docs/overlap.md): 1 (the
  // whole launch, before the chunk's compute) or 2 (MoE round trip: stage 0 dispatch before the
  // expert compute, stage 1 combine after it). launch_stage runs one; all stages in order are
  // one launch.
  [[nodiscard]] virtual int num_stages() const { return 1; }
  virtual void launch_stage(int /*stage*/, backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                            const CaseContext& ctx) const {
    launch(comm, send, recv, shape, ctx);
  }

  // Untimed work on the filled buffers before verification and timing, collective over the
  // communicator (MoE with the counts exchange outside the timed region: the counts reach the
  // receivers here once, as they do before a layer's dispatch).
  virtual void prepare(backend::Comm& /*comm*/, const void* /*send*/, void* /*recv*/, const Shape& /*shape*/,
                       const CaseContext& /*ctx*/) const {}
  // Operations timed on their own beside the case, after its timed rounds, and reported with it
  // (MoE: "counts_exchange"). launch_side runs one of them.
  [[nodiscard]] virtual std::vector<std::string> side_operations(const Shape& /*shape*/) const { return {}; }
  virtual void launch_side(std::string_view /*op*/, backend::Comm& /*comm*/, const void* /*send*/, void* /*recv*/,
                           const Shape& /*shape*/, const CaseContext& /*ctx*/) const {}
  // Families that issue operations on the levels of a HierarchicalComm at once (group_start/
  // group_end: ep-dp-concurrent): the runner gives them the levels whatever the algorithm, waives
  // them off scope global or where the backend cannot group (Comm::group_waiver).
  [[nodiscard]] virtual bool uses_levels() const { return false; }
  // Their parts, each also timed alone as side operation "<name>_alone"; the record's
  // `concurrent` object and the bound (the slowest part: the parts use disjoint links) come
  // from them. Empty for the other families.
  [[nodiscard]] virtual std::vector<ConcurrentPart> concurrent_parts(const Shape& /*shape*/,
                                                                     const CaseContext& /*ctx*/) const {
    return {};
  }
  // Irregular exchanges: the summary of the bytes every rank sends every other rank in one launch
  // (model::TrafficSummary: per-rank bytes by link class, for the traffic-matrix bound,
  // model::estimate_from_summary), on `placement`; nullopt for the others.
  [[nodiscard]] virtual std::optional<model::TrafficSummary> traffic_summary(const Shape& /*shape*/,
                                                                             const Placement& /*placement*/) const {
    return std::nullopt;
  }
  // What the case's size means besides bytes (MoE: workload, tokens, routing, ...), appended to
  // the size field of case_key so that cases of equal bytes stay distinct; empty for the others.
  [[nodiscard]] virtual std::string size_label(const Shape& /*shape*/, const CaseContext& /*ctx*/) const { return {}; }
  // The record's `workload` object (MoE), or null.
  [[nodiscard]] virtual nlohmann::json workload_record(const Shape& /*shape*/) const { return nullptr; }
  // Collective over every process of the run, which all call it for the same cases in the same
  // order, before the case's shapes: work that shape_for would otherwise repeat for every rank on
  // every rank, split over the processes (MoE: each process routes its own tokens and the counts
  // matrix is gathered, instead of every rank routing every rank's tokens). Shapes are the same
  // with or without it; it only makes them cheaper. Default: nothing.
  virtual void share_inputs(std::uint64_t /*requested_bytes*/, const CaseContext& /*ctx*/,
                            RowGather& /*gather*/) const {}

 private:
  struct LaunchArgs {
    const Collective* collective;
    backend::Comm* comm;
    const void* send;
    void* recv;
    const Shape* shape;
    const CaseContext* ctx;
  };
  static void call_launch(const LaunchArgs& a) { a.collective->launch(*a.comm, a.send, a.recv, *a.shape, *a.ctx); }

  const CollectiveFacts& facts_;
};

// Every family, in the fact table's order. A family file registers its factory once, at static
// initialisation: `const bool kRegistered = register_collective(&make_x);` (nothing else names it).
using CollectiveFactory = std::unique_ptr<Collective> (*)();
bool register_collective(CollectiveFactory make);
const std::vector<std::unique_ptr<Collective>>& collective_registry();
const Collective& find_collective(std::string_view name);  // InputError with the accepted names
std::vector<std::string> collective_names();

}  // namespace collbench::coll
