// Measuring one case: measure() and its steps (setup, verification, warm-up, timed rounds, side
// operations, overlap mode, per-rank figures). The pure rules they apply are in measure_rules.cpp.
#include "collbench/run/measure.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/coll/sendrecv.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/case_buffers.hpp"
#include "collbench/run/timed_sample.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::run {
namespace {

// Injected delays: simulated time in a simulation build (a host sleep would not move it).
void sleep_us(double us) {
  backend::sim::sleep_seconds(us * 1e-6);
}

// World rank of `peer`, a rank of the measured communicator that holds this rank as `self`:
// the world communicator for scope global, else this rank's domain (split in world-rank order).
int world_rank_of(const MeasureInput& in, int self, int peer) {
  if (in.spec->scope == Scope::global || in.placement == nullptr || in.placement->num_domains() <= 1) return peer;
  const int domain = in.placement->domain_of(in.world_rank);
  int index = 0;
  for (int w = 0; w < in.placement->num_ranks(); ++w) {
    if (in.placement->domain_of(w) != domain) continue;
    if (index++ == peer) return w;
  }
  return in.world_rank - self + peer;
}

[[noreturn]] void hang_forever(int rank, int case_index, const std::string& where) {
  std::fprintf(stderr, "collbench: injected hang on rank %d at case %d %s\n", rank, case_index, where.c_str());
  std::fflush(stderr);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// The verification launch. A library that refuses the case as unsupported at the call
// (backend::Unsupported: NCCL's "no algorithm/protocol available" for a forced algorithm it has
// no use of on this communicator) on every rank makes the case a waiver, with rank 0's reason, agreed by an
// all-reduce of the refusals. On some ranks only it stays a failure: the other ranks' launches
// wait for peers that never join.
std::optional<std::string> launch_or_refusal(const MeasureInput& in, CaseBuffers& b, const coll::Shape& shape,
                                             const coll::CaseContext& ctx) {
  std::string why;
  try {
    in.collective->launch(*in.comm, b.send_ptr, b.recv_ptr, shape, ctx);
  } catch (const backend::Unsupported& e) {
    why = e.what();
  }
  const int mine = why.empty() ? 0 : 1;
  int refused = 0;
  MPI_Allreduce(&mine, &refused, 1, MPI_INT, MPI_SUM, in.control->comm());
  if (refused == 0) return std::nullopt;
  if (refused < in.control->size()) {
    throw RuntimeFailure(fmt::format("the library refused the case on {} of {} ranks{}", refused, in.control->size(),
                                     why.empty() ? std::string() : ": " + why));
  }
  return in.control->broadcast_string(why);
}

// Launch, wait, check; `refused` set (and nothing checked) when every rank's library refused.
std::uint64_t verify_once(const MeasureInput& in, CaseBuffers& b, const coll::Shape& shape,
                          const coll::CaseContext& ctx, std::optional<std::string>& refused) {
  refused = launch_or_refusal(in, b, shape, ctx);
  if (refused) return 0;
  in.comm->synchronize();
  return count_wrong_result(in, b, shape, ctx);
}

// Where this rank is, for the watchdog (null: none).
void mark(const MeasureInput& in, int iteration, Phase phase, Stage stage = Stage::timed) {
  if (in.watchdog != nullptr) in.watchdog->at(in.case_index, iteration, phase, in.timeout_s, stage);
}

// What a timed iteration needs, fixed for the whole case.
struct TimedCase {
  const MeasureInput* in = nullptr;
  const CaseBuffers* buffers = nullptr;
  const coll::Shape* shape = nullptr;
  const coll::CaseContext* ctx = nullptr;
  backend::Timer* timer = nullptr;
  const SampleOps* ops = nullptr;  // the timer's path: what a sample issues (timed_sample.hpp)
  int batch = 1;
  double slow = 1.0;       // fault kind slow
  double pair_slow = 1.0;  // fault kind slow-pair
  // The inline clock's launch, bound once for the case (Collective::bind_launch), and whether
  // the communicator's synchronize() does anything.
  const backend::BoundCall* launch = nullptr;
  bool synchronize = true;
};

// This rank's sums over the timed iterations (the record's per-rank mean, max and wait).
struct RankSums {
  double total = 0.0;
  double inside = 0.0;
  double max_total = 0.0;
  void add(double t, double in) {
    total += t;
    inside += in;
    max_total = std::max(max_total, t);
  }
};

// One timed iteration through the backend's timer, with the fault injection of the case: the
// host barrier, then the timed sequence (timed_sample.hpp: hold, device barrier, start, the
// operations, release, synchronize), then stop.
void timed_iteration(const TimedCase& t, int iter, double& total, RankSums& sums) {
  const MeasureInput& in = *t.in;
  if (in.faults->hang(in.world_rank, in.case_index, iter)) {
    mark(in, iter, Phase::fault);
    hang_forever(in.world_rank, in.case_index, fmt::format("iteration {}", iter));
  }
  const double delay_us = in.faults->delay_us(in.world_rank, in.case_index, iter);
  mark(in, iter, Phase::waiting);
  in.control->barrier(in.progress);
  // The watchdog names a rank delayed here: it has not entered the collective.
  run_sample(SampleSteps{t.timer, in.backend, in.comm, t.ops}, delay_us, [&in, iter, delay_us] {
    mark(in, iter, Phase::delay);
    sleep_us(delay_us);
    mark(in, iter, Phase::waiting);
  });
  if (t.pair_slow > 1.0) {
    // slow-pair: the exchange takes `factor` times as long (the timer must have stopped
    // once to know how long it took).
    t.timer->stop();
    sleep_us((t.pair_slow - 1.0) * t.timer->inside_us());
  }
  t.timer->stop();
  const int ops = t.ops->operations();
  total = per_operation_us(t.timer->total_us(), t.slow, ops);
  sums.add(total, per_operation_us(t.timer->inside_us(), t.slow, ops));
}

// One round on MPI_Wtime read inline (use_inline_clock): between the two clock reads only the
// bound launches (and synchronize() where it does something), as in a bare MPI loop; the same
// times as the timer would give (no fault here: no delay, so inside == total, and no slow factor).
void inline_clock_round(const TimedCase& t, int& iter, std::vector<double>& local, RankSums& sums) {
  const MeasureInput& in = *t.in;
  backend::Comm& comm = *in.comm;
  const backend::BoundCall& launch = *t.launch;
  const bool synchronize = t.synchronize;
  for (double& slot : local) {
    mark(in, iter++, Phase::waiting);
    in.control->barrier(in.progress);
    const double start = MPI_Wtime();
    for (int b = 0; b < t.batch; ++b) launch();
    if (synchronize) comm.synchronize();
    const double stop = MPI_Wtime();
    slot = (stop - start) * 1e6 / t.batch;
    sums.add(slot, slot);
  }
}

// This rank's part of the timed rounds: its sums and every one of its per-iteration times.
struct RankTimes {
  RankSums sums;
  std::vector<double> totals;  // for its median
};

// The case on the measured communicator: its context and its buffers. Not copied or moved: the
// inline clock's bound launch points into it.
struct PreparedCase {
  PreparedCase() = default;
  PreparedCase(const PreparedCase&) = delete;
  PreparedCase& operator=(const PreparedCase&) = delete;
  coll::CaseContext ctx;
  CaseBuffers buffers;
};

// Overlap mode's compute load and, for the pipeline, the chunk case with one buffer set per chunk.
// Not copied or moved: chunk_ctx points into chunk_case.
struct OverlapSetup {
  OverlapSetup() = default;
  OverlapSetup(const OverlapSetup&) = delete;
  OverlapSetup& operator=(const OverlapSetup&) = delete;
  std::unique_ptr<overlap::ComputeLoad> compute;
  plan::Case chunk_case;
  coll::Shape chunk_shape;
  coll::CaseContext chunk_ctx;
  std::vector<CaseBuffers> chunk_buffers;
};

// The case's context and shape on this rank, its buffers filled, and the collective prepared on them.
void prepare_case(const MeasureInput& in, coll::Shape& shape, PreparedCase& pc) {
  backend::Comm& comm = *in.comm;
  pc.ctx = case_context(*in.spec, comm.rank(), comm.size(), in.placement);
  shape = in.collective->shape_for(in.spec->bytes, pc.ctx);
  pc.buffers = allocate_and_fill(in, shape, pc.ctx);
  in.collective->prepare(comm, pc.buffers.send_ptr, pc.buffers.recv_ptr, shape, pc.ctx);
}

// The pipeline's chunks (overlap chunks > 0): the load per chunk, the chunk case and shape, and
// one filled buffer set per chunk.
void add_pipeline_chunks(const MeasureInput& in, Measurement::Overlap& o, OverlapSetup& ov) {
  const plan::Case& spec = *in.spec;
  const backend::Comm& comm = *in.comm;
  o.compute = overlap::chunk_spec(o.compute, spec.overlap_chunks);
  o.chunks = spec.overlap_chunks;
  o.stages = in.collective->num_stages();
  ov.chunk_case = pipeline_chunk_case(spec, spec.overlap_chunks);
  ov.chunk_shape = in.collective->shape_for(ov.chunk_case.bytes,
                                            case_context(ov.chunk_case, comm.rank(), comm.size(), in.placement));
  for (int c = 0; c < spec.overlap_chunks; ++c) {
    ov.chunk_buffers.push_back(
        allocate_and_fill(in, ov.chunk_shape, case_context(ov.chunk_case, comm.rank(), comm.size(), in.placement)));
  }
}

// Overlap mode (spec.overlap set): the compute load, and for the pipeline the chunks, prepared.
void prepare_overlap(const MeasureInput& in, const coll::CaseContext& ctx, Measurement& m, OverlapSetup& ov) {
  const plan::Case& spec = *in.spec;
  backend::Comm& comm = *in.comm;
  const bool pipelined = !spec.overlap.empty() && spec.overlap_chunks > 0;
  if (!spec.overlap.empty()) {
    m.overlap.emplace();
    m.overlap->compute = overlap::parse_compute_spec(spec.overlap, comm.size());
    if (pipelined) add_pipeline_chunks(in, *m.overlap, ov);
    ov.compute = in.backend->make_compute(m.overlap->compute);
    m.overlap->device = ov.compute->device();
  }
  ov.chunk_ctx = pipelined ? case_context(ov.chunk_case, comm.rank(), comm.size(), in.placement) : ctx;
  for (auto& cb : ov.chunk_buffers) {
    in.collective->prepare(comm, cb.send_ptr, cb.recv_ptr, ov.chunk_shape, ov.chunk_ctx);
  }
}

// Verification before timing (overlap mode: while the compute load runs beside the collective):
// this rank's wrong elements; m.waived set instead when every rank's library refused the case.
std::uint64_t verify_case(const MeasureInput& in, PreparedCase& pc, OverlapSetup& ov, Measurement& m) {
  if (!in.spec->check) {  // -c 0: one unchecked launch, so that a refusal is still a waiver
    m.waived = launch_or_refusal(in, pc.buffers, m.shape, pc.ctx);
    if (!m.waived) in.comm->synchronize();
    return 0;
  }
  overlap::ComputeLoad* compute = ov.compute.get();
  if (compute) compute->start();
  std::uint64_t wrong = verify_once(in, pc.buffers, m.shape, pc.ctx, m.waived);
  if (compute) compute->wait();
  for (auto& cb : ov.chunk_buffers) {
    if (m.waived) break;
    compute->start();
    wrong += verify_once(in, cb, ov.chunk_shape, ov.chunk_ctx, m.waived);
    compute->wait();
  }
  if (!m.waived) m.checked = true;
  return wrong;
}

// Warm-up (excluded from every statistic), with the fault injection's hang in warm-up.
void warm_up(const MeasureInput& in, const PreparedCase& pc, const coll::Shape& shape) {
  for (int i = 0; i < in.spec->stop.warmup; ++i) {
    if (in.faults->hang_in_warmup(in.world_rank, in.case_index, i)) {
      mark(in, i, Phase::fault, Stage::warmup);
      hang_forever(in.world_rank, in.case_index, fmt::format("warm-up iteration {}", i));
    }
    mark(in, i, Phase::waiting, Stage::warmup);
    in.collective->launch(*in.comm, pc.buffers.send_ptr, pc.buffers.recv_ptr, shape, pc.ctx);
  }
  in.comm->synchronize();
}

// Fault kind slow-pair on a sendrecv case: the larger factor of this rank's pairs with its two
// peers (slow-pair names world ranks; the peers are ranks of the measured communicator); else 1.
double pair_slow_factor(const MeasureInput& in, const coll::CaseContext& ctx) {
  if (in.collective->id() != CollectiveId::sendrecv) return 1.0;
  const coll::SendRecvPeers peers = coll::sendrecv_peers(ctx);
  return std::max(in.faults->pair_factor(in.world_rank, world_rank_of(in, ctx.rank, peers.send_to), in.case_index),
                  in.faults->pair_factor(in.world_rank, world_rank_of(in, ctx.rank, peers.recv_from), in.case_index));
}

// What an iteration on the backend's timer needs, fixed for the case (the side operations' too).
TimedCase timer_case(const MeasureInput& in, const PreparedCase& pc, const coll::Shape& shape, backend::Timer& timer) {
  TimedCase timed;
  timed.in = &in;
  timed.buffers = &pc.buffers;
  timed.shape = &shape;
  timed.ctx = &pc.ctx;
  timed.timer = &timer;
  timed.batch = in.spec->timing == Timing::pipelined ? std::max(in.spec->stop.batch, 1) : 1;
  timed.slow = in.faults->slow_factor(in.case_index);
  return timed;
}

// What a sample of the case issues on the timer's path (timed_sample.hpp): `batch` launches of
// the case, primed (and under --graph captured) when the timer holds the stream.
void emplace_sample_ops(const TimedCase& t, std::function<void()> launch, std::optional<SampleOps>& ops) {
  const MeasureInput& in = *t.in;
  ops.emplace(std::move(launch), t.batch, in.spec->graph, t.timer->holds_stream(), *in.backend, *in.comm);
}

// What every timed iteration needs, fixed for the case; on the inline clock (use_inline_clock)
// the launch bound once into `bound`, else the sample's operations in `ops`; both must outlive
// the rounds.
TimedCase timed_case(const MeasureInput& in, const PreparedCase& pc, const coll::Shape& shape, backend::Timer& timer,
                     std::optional<backend::BoundCall>& bound, std::optional<SampleOps>& ops) {
  TimedCase timed = timer_case(in, pc, shape, timer);
  timed.pair_slow = pair_slow_factor(in, pc.ctx);
  if (in.spec->graph == 0 && use_inline_clock(timer.reads_mpi_wtime(), in.faults->affects_case(in.case_index))) {
    bound.emplace(in.collective->bind_launch(*in.comm, pc.buffers.send_ptr, pc.buffers.recv_ptr, shape, pc.ctx));
  } else {
    emplace_sample_ops(
        timed,
        [&in, &pc, &shape] {
          in.collective->launch(*in.comm, pc.buffers.send_ptr, pc.buffers.recv_ptr, shape, pc.ctx);
        },
        ops);
    timed.ops = &*ops;
  }
  timed.launch = bound ? &*bound : nullptr;
  timed.synchronize = !in.comm->synchronize_is_noop();
  return timed;
}

// Scope domain over several domains: each domain's per-iteration time (max over its ranks) is
// kept as well, so every domain can be judged on its own (acceptance, bisection).
bool keeps_domain_samples(const MeasureInput& in) {
  return in.spec->scope == Scope::domain && in.placement != nullptr && in.placement->num_domains() > 1;
}

// One round's times of every rank gathered on rank 0 (into `all`, by rank), and there each
// domain's per-iteration max over its ranks appended to domains[domain].
void gather_domain_round(const MeasureInput& in, const std::vector<double>& local, std::vector<double>& all,
                         std::vector<std::vector<double>>& domains) {
  const Control& control = *in.control;
  const int round = static_cast<int>(local.size());
  const auto stride = static_cast<std::size_t>(round);
  if (control.rank() == 0) all.assign(stride * static_cast<std::size_t>(control.size()), 0.0);
  MPI_Gather(local.data(), round, MPI_DOUBLE, all.data(), round, MPI_DOUBLE, 0, control.comm());
  if (control.rank() != 0) return;
  for (int d = 0; d < in.placement->num_domains(); ++d) {
    auto& dom = domains[static_cast<std::size_t>(d)];
    for (std::size_t r = 0; r < stride; ++r) {
      double worst = 0.0;
      for (int w = 0; w < control.size(); ++w) {
        if (in.placement->domain_of(w) == d) worst = std::max(worst, all[static_cast<std::size_t>(w) * stride + r]);
      }
      dom.push_back(worst);
    }
  }
}

// After a round: rank 0 adds the round's maxima over ranks to the samples and applies the stopping
// rule; every rank follows its broadcast decision. The next round's length, or none (m.stop_reason set).
std::optional<int> next_round_or_stop(const MeasureInput& in, const std::vector<double>& round_max, int iter, int round,
                                      double t_begin, Measurement& m) {
  const Control& control = *in.control;
  std::string reason;
  int next_round = 0;
  if (control.rank() == 0) {
    m.samples_us.insert(m.samples_us.end(), round_max.begin(), round_max.end());
    const double elapsed = MPI_Wtime() - t_begin;
    reason = stop_reason(in.spec->stop, m.samples_us, elapsed);
    next_round = next_round_size(in.spec->stop, iter, round, elapsed);
  }
  reason = control.broadcast_string(reason);
  if (!reason.empty()) {
    m.stop_reason = reason;
    return std::nullopt;
  }
  MPI_Bcast(&next_round, 1, MPI_INT, 0, control.comm());
  return next_round;
}

// The timed rounds until the stopping rule says enough: rank 0's samples (and each domain's),
// the iteration count and the stop reason into `m`, this rank's own times into `own`. The case's
// fixed part and the sums are locals here: the compiler sees that nothing the timed region calls
// changes them, so the timed iterations compile as they did inside measure() (no reload).
void timed_rounds(const MeasureInput& in, const PreparedCase& pc, backend::Timer& timer, Measurement& m,
                  RankTimes& own) {
  std::optional<backend::BoundCall> bound_launch;
  std::optional<SampleOps> ops;
  const TimedCase t = timed_case(in, pc, m.shape, timer, bound_launch, ops);
  const Control& control = *in.control;
  const bool per_domain = keeps_domain_samples(in);
  if (per_domain && control.rank() == 0) {
    m.domain_samples_us.assign(static_cast<std::size_t>(in.placement->num_domains()), {});
  }
  std::vector<double> all_totals;  // per_domain: every rank's times of one round, on rank 0
  int iter = 0;
  int round = std::clamp(in.spec->stop.min_iters, 1, 16);
  const double t_begin = MPI_Wtime();
  std::vector<double> local_total;
  std::vector<double> round_max;
  RankSums sums;
  for (;;) {
    local_total.assign(static_cast<std::size_t>(round), 0.0);
    if (t.launch != nullptr) {
      inline_clock_round(t, iter, local_total, sums);
    } else {
      for (double& slot : local_total) timed_iteration(t, iter++, slot, sums);
    }
    control.max_to_root(local_total, round_max);
    own.totals.insert(own.totals.end(), local_total.begin(), local_total.end());
    if (per_domain) gather_domain_round(in, local_total, all_totals, m.domain_samples_us);
    const std::optional<int> next = next_round_or_stop(in, round_max, iter, round, t_begin, m);
    if (!next) break;
    round = *next;
  }
  m.iterations = iter;
  own.sums = sums;
}

// Rank 0: the median over kSideIters iterations of the max over ranks of side operation `op`,
// `batch` launches back to back per iteration as in a round of the case, in the same timed
// sequence (timed_sample.hpp; under --graph a capture of its own).
double time_side_operation(const TimedCase& t, const std::string& op, int iter) {
  constexpr int kSideIters = 20;
  const MeasureInput& in = *t.in;
  std::optional<SampleOps> ops;
  emplace_sample_ops(
      t,
      [&in, &t, &op] {
        in.collective->launch_side(op, *in.comm, t.buffers->send_ptr, t.buffers->recv_ptr, *t.shape, *t.ctx);
      },
      ops);
  std::vector<double> local(kSideIters, 0.0);
  std::vector<double> worst;
  for (int i = 0; i < kSideIters; ++i) {
    mark(in, iter, Phase::waiting);
    in.control->barrier(in.progress);
    run_sample(SampleSteps{t.timer, in.backend, in.comm, &*ops}, 0.0, [] {});
    t.timer->stop();
    local[static_cast<std::size_t>(i)] = per_operation_us(t.timer->total_us(), t.slow, ops->operations());
  }
  in.control->max_to_root(local, worst);
  return in.control->rank() == 0 ? stats::summarize(worst).p50 : 0.0;
}

// Side operations (MoE: the counts exchange alone; ep-dp-concurrent: each part alone), timed like
// a round of the case (under --timing pipelined `batch` launches back to back), so that a ratio
// against the case's time compares like with like.
void time_side_operations(const TimedCase& t, Measurement& m) {
  for (const auto& op : t.in->collective->side_operations(m.shape)) {
    const double p50 = time_side_operation(t, op, m.iterations);
    if (t.in->control->rank() == 0) m.side_us[op] = p50;
  }
}

// Overlap mode: the collective alone, the load alone, and both at once (overlap_measure.hpp).
void time_overlap_mode(const MeasureInput& in, const PreparedCase& pc, const OverlapSetup& ov, Measurement& m) {
  const auto& coll = *in.collective;
  backend::Comm& comm = *in.comm;
  const int iter = m.iterations;
  OverlapOps ops;
  ops.chunks = m.overlap->chunks;
  ops.stages = m.overlap->stages;
  ops.launch = [&](int chunk, int stage) {
    if (stage < 0) {
      coll.launch(comm, pc.buffers.send_ptr, pc.buffers.recv_ptr, m.shape, pc.ctx);
      return;
    }
    const auto& cb = ov.chunk_buffers[static_cast<std::size_t>(chunk)];
    coll.launch_stage(stage, comm, cb.send_ptr, cb.recv_ptr, ov.chunk_shape, ov.chunk_ctx);
  };
  ops.synchronize = [&comm] { comm.synchronize(); };
  ops.compute = ov.compute.get();
  ops.progress = [&in, iter](int it) { mark(in, iter + it, Phase::waiting); };
  m.overlap->samples = time_overlap(ops, *in.control, in.spec->stop, in.progress);
  m.overlap->compute_wrong_by_rank = in.control->gather(ov.compute->check());
}

// The record's per-rank figures, gathered on rank 0: each rank's mean and max time per iteration,
// its mean time inside the collective, and its median.
void gather_rank_figures(const Control& control, const RankTimes& own, Measurement& m) {
  const int iter = m.iterations;
  const double mean = iter > 0 ? own.sums.total / iter : 0.0;
  const double wait = iter > 0 ? own.sums.inside / iter : 0.0;
  m.rank_mean_us = control.gather(mean);
  m.rank_max_us = control.gather(own.sums.max_total);
  m.rank_wait_us = control.gather(wait);
  m.rank_p50_us = control.gather(own.totals.empty() ? 0.0 : stats::summarize(own.totals).p50);
}
}  // namespace

Measurement measure(const MeasureInput& in) {
  // Every step below is bounded by the watchdog: it learns where this rank is (mark).
  mark(in, -1, Phase::host, Stage::setup);
  // 0. The case's buffers, filled; overlap mode's load and pipeline chunks.
  Measurement m;
  PreparedCase pc;
  prepare_case(in, m.shape, pc);
  OverlapSetup ov;
  prepare_overlap(in, pc.ctx, m, ov);

  // 1. Verify before timing.
  mark(in, -1, Phase::waiting, Stage::verification);
  const std::uint64_t wrong = verify_case(in, pc, ov, m);
  if (m.waived) return m;  // every rank agreed: nothing was run
  m.wrong_by_rank = in.control->gather(wrong);

  // 2. Warm-up.
  warm_up(in, pc, m.shape);

  // 3. Timed rounds, on the backend's timer or the inline clock.
  auto timer = in.backend->timer();
  RankTimes own;
  timed_rounds(in, pc, *timer, m, own);

  // 4. Side operations, 5. overlap mode's three timings, 6. the per-rank figures.
  time_side_operations(timer_case(in, pc, m.shape, *timer), m);
  if (ov.compute) time_overlap_mode(in, pc, ov, m);
  gather_rank_figures(*in.control, own, m);
  return m;
}

}  // namespace collbench::run
