// Verification and timing loop.
#include "collbench/run/measure.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/coll/sendrecv.hpp"
#include "collbench/core/error.hpp"
#include "collbench/stats/summary.hpp"
#include "collbench/workload/profile.hpp"

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

// Buffers for one case: two (out of place) or one (in place), plus the launch pointers.
struct CaseBuffers {
  std::unique_ptr<backend::Buffer> send, recv;
  const void* send_ptr = nullptr;
  void* recv_ptr = nullptr;
  std::size_t result_offset_elems = 0;
  std::size_t result_elems = 0;
};

// A new buffer of `bytes`, zeroed and then written by `write`: in place when the backend's memory
// is host memory (no host copy per rank: a simulation holds every rank in one process), else in a
// staged host copy that is uploaded.
template <class Write>
std::unique_ptr<backend::Buffer> filled_buffer(backend::Backend& be, std::size_t bytes, const Write& write) {
  auto buf = be.allocate(bytes);
  if (auto* host = static_cast<unsigned char*>(buf->host_data())) {
    std::memset(host, 0, bytes);
    write(host);
    return buf;
  }
  std::vector<unsigned char> staged(bytes, 0);
  write(staged.data());
  be.upload(*buf, staged.data(), bytes);
  return buf;
}

CaseBuffers allocate_and_fill(const MeasureInput& in, const coll::Shape& shape, const coll::CaseContext& ctx) {
  const std::size_t elem = dtype_size(ctx.dtype);
  CaseBuffers b;
  const auto& coll = *in.collective;
  if (ctx.in_place) {
    const std::size_t elems = shape.in_place_elems();
    const std::size_t input_offset = coll.in_place_input_offset(shape, ctx);
    b.recv = filled_buffer(*in.backend, std::max<std::size_t>(elems * elem, 1),
                           [&](unsigned char* p) { coll.fill(p + input_offset * elem, shape, ctx); });
    auto* base = static_cast<unsigned char*>(b.recv->data());
    b.send_ptr = base + input_offset * elem;
    b.recv_ptr = base;
    b.result_offset_elems = coll.in_place_result_offset(shape, ctx, *in.comm);
  } else {
    b.send = filled_buffer(*in.backend, std::max<std::size_t>(shape.send_elems * elem, 1),
                           [&](unsigned char* p) { coll.fill(p, shape, ctx); });
    b.recv = in.backend->allocate(std::max<std::size_t>(shape.recv_elems * elem, 1));
    b.send_ptr = b.send->data();
    b.recv_ptr = b.recv->data();
  }
  b.result_elems = shape.recv_elems;
  return b;
}

// The verification launch. A library that refuses the case as unsupported at the call
// (backend::Unsupported: NCCL's ncclInvalidUsage for a forced algorithm it has no use of on this
// communicator) on every rank makes the case a waiver, with rank 0's reason, agreed by an
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
  const std::size_t elem = dtype_size(ctx.dtype);
  // Host memory is checked where it is; device memory (or a result the fault injection is about
  // to corrupt, which must not reach the timed iterations) through a host copy.
  const bool corrupt = in.faults->corrupt(in.world_rank, in.case_index) && b.result_elems > 0;
  auto* base = corrupt ? nullptr : static_cast<unsigned char*>(b.recv->host_data());
  std::vector<unsigned char> staged;
  if (base == nullptr) {
    staged.resize(std::max<std::size_t>(b.recv->bytes(), 1));
    in.backend->download(staged.data(), *b.recv, b.recv->bytes());
    base = staged.data();
  }
  unsigned char* result = base + b.result_offset_elems * elem;
  if (corrupt) {
    // Flip one element so that verification must catch it and name this rank.
    const std::size_t victim = b.result_elems / 2;
    store_element(result, victim, ctx.dtype, coll::corrupted(load_element(result, victim, ctx.dtype)));
  }
  return in.collective->verify(result, shape, ctx);
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

// One timed iteration through the backend's timer, with the fault injection of the case.
void timed_iteration(const TimedCase& t, int iter, double& total, RankSums& sums) {
  const MeasureInput& in = *t.in;
  if (in.faults->hang(in.world_rank, in.case_index, iter)) {
    mark(in, iter, Phase::fault);
    hang_forever(in.world_rank, in.case_index, fmt::format("iteration {}", iter));
  }
  const double delay_us = in.faults->delay_us(in.world_rank, in.case_index, iter);
  mark(in, iter, Phase::waiting);
  in.control->barrier(in.progress);
  t.timer->start();
  if (delay_us > 0) {  // the watchdog names a rank delayed here: it has not entered the collective
    mark(in, iter, Phase::delay);
    sleep_us(delay_us);
    mark(in, iter, Phase::waiting);
    t.timer->enter();
  }
  for (int b = 0; b < t.batch; ++b) {
    in.collective->launch(*in.comm, t.buffers->send_ptr, t.buffers->recv_ptr, *t.shape, *t.ctx);
  }
  in.comm->synchronize();
  if (t.pair_slow > 1.0) {
    // slow-pair: the exchange takes `factor` times as long (the timer must have stopped
    // once to know how long it took).
    t.timer->stop();
    sleep_us((t.pair_slow - 1.0) * t.timer->inside_us());
  }
  t.timer->stop();
  total = t.timer->total_us() * t.slow / t.batch;
  sums.add(total, t.timer->inside_us() * t.slow / t.batch);
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
}  // namespace

coll::CaseContext case_context(const plan::Case& spec, int rank, int num_ranks, const Placement* placement) {
  coll::CaseContext ctx;
  ctx.dtype = spec.dtype;
  ctx.redop = spec.redop;
  ctx.rank = rank;
  ctx.num_ranks = num_ranks;
  ctx.in_place = spec.in_place;
  ctx.root = spec.root;
  ctx.params = &spec.params;
  ctx.algo = spec.algo;
  if (spec.scope == Scope::global && placement != nullptr && placement->num_ranks() == num_ranks) {
    ctx.placement = *placement;
  } else {
    ctx.placement = placement_from_sizes(num_ranks, {num_ranks});
  }
  return ctx;
}

plan::Case pipeline_chunk_case(const plan::Case& spec, int chunks) {
  plan::Case c = spec;
  if (chunks < 1) throw InputError(fmt::format("--overlap-chunks {}: must be at least 1", chunks));
  if (spec.collective.rfind("moe-", 0) == 0) {
    const coll::MoeParams p = coll::parse_moe_params(spec.params);
    const int tokens = p.tokens ? *p.tokens : workload::load_workload_profile(p.workload).tokens_per_rank;
    if (tokens < chunks) {
      throw InputError(fmt::format("--overlap-chunks {}: {} tokens per rank cannot be split into {} chunks", chunks,
                                   tokens, chunks));
    }
    c.params["tokens"] = std::to_string((tokens + chunks - 1) / chunks);
  } else {
    if (spec.bytes / static_cast<std::uint64_t>(chunks) == 0) {
      throw InputError(
          fmt::format("--overlap-chunks {}: {} B cannot be split into {} chunks", chunks, spec.bytes, chunks));
    }
    c.bytes = spec.bytes / static_cast<std::uint64_t>(chunks);
  }
  c.overlap_chunks = 0;
  return c;
}

std::string stop_reason(const plan::StopRule& rule, const std::vector<double>& samples, double elapsed_s) {
  const auto n = static_cast<int>(samples.size());
  if (n >= rule.max_iters) return "max_iters";
  if (elapsed_s >= rule.max_time_s) return "max_time";
  if (n < rule.min_iters) return {};
  if (elapsed_s >= rule.min_time_s && stats::summarize(samples).relative_ci_half_width() <= rule.max_noise) {
    return "converged";
  }
  if (rule.budget_s > 0 && n >= rule.budget_iters && elapsed_s >= rule.budget_s) return "budget";
  return {};
}

int next_round_size(const plan::StopRule& rule, int iterations, int round, double elapsed_s) {
  const double per_iter_s = elapsed_s / static_cast<double>(std::max(iterations, 1));
  // Iterations that fill `seconds` at the rate so far (rounded down, plus one).
  const auto iters_in = [per_iter_s](double seconds) {
    return static_cast<long long>(std::max(seconds, 0.0) / per_iter_s) + 1;
  };
  long long next = std::min<long long>(2LL * round, static_cast<long long>(rule.max_iters) - iterations);
  if (per_iter_s > 0) next = std::min(next, iters_in(rule.max_time_s - elapsed_s));
  if (rule.budget_s > 0 && per_iter_s > 0) {
    const long long to_iters = static_cast<long long>(std::max(rule.budget_iters, rule.min_iters)) - iterations;
    const long long to_time = elapsed_s < rule.budget_s ? iters_in(rule.budget_s - elapsed_s) : 0;
    const long long to_budget = std::max(to_iters, to_time);
    if (to_budget > 0) next = std::min(next, to_budget);
  }
  return static_cast<int>(std::clamp<long long>(next, 1, 4096));
}

bool use_inline_clock(bool timer_reads_mpi_wtime, bool case_has_faults) {
  return timer_reads_mpi_wtime && !case_has_faults;
}

Measurement measure(const MeasureInput& in) {
  // Every step below is bounded by the watchdog: it learns where this rank is (mark).
  mark(in, -1, Phase::host, Stage::setup);
  const plan::Case& spec = *in.spec;
  const auto& coll = *in.collective;
  backend::Comm& comm = *in.comm;
  const Control& control = *in.control;
  Measurement m;

  const coll::CaseContext ctx = case_context(spec, comm.rank(), comm.size(), in.placement);
  m.shape = coll.shape_for(spec.bytes, ctx);
  CaseBuffers buffers = allocate_and_fill(in, m.shape, ctx);
  coll.prepare(comm, buffers.send_ptr, buffers.recv_ptr, m.shape, ctx);

  // Overlap mode: the compute load, and for the pipeline one buffer set per chunk.
  std::unique_ptr<overlap::ComputeLoad> compute;
  const bool pipelined_overlap = !spec.overlap.empty() && spec.overlap_chunks > 0;
  plan::Case chunk_spec_case;
  coll::Shape chunk_shape;
  std::vector<CaseBuffers> chunk_buffers;
  if (!spec.overlap.empty()) {
    m.overlap.emplace();
    m.overlap->compute = overlap::parse_compute_spec(spec.overlap, comm.size());
    if (pipelined_overlap) {
      m.overlap->compute = overlap::chunk_spec(m.overlap->compute, spec.overlap_chunks);
      m.overlap->chunks = spec.overlap_chunks;
      m.overlap->stages = coll.num_stages();
      chunk_spec_case = pipeline_chunk_case(spec, spec.overlap_chunks);
      chunk_shape =
          coll.shape_for(chunk_spec_case.bytes, case_context(chunk_spec_case, comm.rank(), comm.size(), in.placement));
      for (int c = 0; c < spec.overlap_chunks; ++c) {
        chunk_buffers.push_back(
            allocate_and_fill(in, chunk_shape, case_context(chunk_spec_case, comm.rank(), comm.size(), in.placement)));
      }
    }
    compute = in.backend->make_compute(m.overlap->compute);
    m.overlap->device = compute->device();
  }
  const coll::CaseContext chunk_ctx =
      pipelined_overlap ? case_context(chunk_spec_case, comm.rank(), comm.size(), in.placement) : ctx;
  for (auto& cb : chunk_buffers) coll.prepare(comm, cb.send_ptr, cb.recv_ptr, chunk_shape, chunk_ctx);

  // 1. Verify before timing (overlap mode: while the compute load runs beside the collective).
  mark(in, -1, Phase::waiting, Stage::verification);
  std::uint64_t wrong = 0;
  if (spec.check) {
    if (compute) compute->start();
    wrong = verify_once(in, buffers, m.shape, ctx, m.waived);
    if (compute) compute->wait();
    for (auto& cb : chunk_buffers) {
      if (m.waived) break;
      compute->start();
      wrong += verify_once(in, cb, chunk_shape, chunk_ctx, m.waived);
      compute->wait();
    }
    if (m.waived) return m;  // every rank agreed: nothing was run
    m.checked = true;
  }
  m.wrong_by_rank = control.gather(wrong);

  // 2. Warm-up (excluded from every statistic).
  for (int i = 0; i < spec.stop.warmup; ++i) {
    if (in.faults->hang_in_warmup(in.world_rank, in.case_index, i)) {
      mark(in, i, Phase::fault, Stage::warmup);
      hang_forever(in.world_rank, in.case_index, fmt::format("warm-up iteration {}", i));
    }
    mark(in, i, Phase::waiting, Stage::warmup);
    coll.launch(comm, buffers.send_ptr, buffers.recv_ptr, m.shape, ctx);
  }
  comm.synchronize();

  // 3. Timed rounds.
  auto timer = in.backend->timer();
  const double slow = in.faults->slow_factor(in.case_index);
  const bool pipelined = spec.timing == Timing::pipelined;
  const int batch = pipelined ? std::max(spec.stop.batch, 1) : 1;
  double pair_slow = 1.0;
  if (coll.id() == CollectiveId::sendrecv) {
    // slow-pair names world ranks; the peers are ranks of the measured communicator.
    const coll::SendRecvPeers peers = coll::sendrecv_peers(ctx);
    pair_slow =
        std::max(in.faults->pair_factor(in.world_rank, world_rank_of(in, ctx.rank, peers.send_to), in.case_index),
                 in.faults->pair_factor(in.world_rank, world_rank_of(in, ctx.rank, peers.recv_from), in.case_index));
  }
  // Scope domain over several domains: each domain's per-iteration time (max over its ranks)
  // is kept as well, so every domain can be judged on its own (acceptance, bisection).
  const bool per_domain = spec.scope == Scope::domain && in.placement != nullptr && in.placement->num_domains() > 1;
  if (per_domain && control.rank() == 0)
    m.domain_samples_us.assign(static_cast<std::size_t>(in.placement->num_domains()), {});
  std::vector<double> own_totals;  // this rank's per-iteration times, for its median
  std::vector<double> all_totals;  // per_domain: every rank's times of one round, on rank 0

  TimedCase timed;
  timed.in = &in;
  timed.buffers = &buffers;
  timed.shape = &m.shape;
  timed.ctx = &ctx;
  timed.timer = timer.get();
  timed.batch = batch;
  timed.slow = slow;
  timed.pair_slow = pair_slow;
  const bool inline_clock = use_inline_clock(timer->reads_mpi_wtime(), in.faults->affects_case(in.case_index));
  std::optional<backend::BoundCall> bound_launch;
  if (inline_clock) bound_launch.emplace(coll.bind_launch(comm, buffers.send_ptr, buffers.recv_ptr, m.shape, ctx));
  timed.launch = bound_launch ? &*bound_launch : nullptr;
  timed.synchronize = !comm.synchronize_is_noop();
  RankSums sums;
  int iter = 0;
  int round = std::clamp(spec.stop.min_iters, 1, 16);
  const double t_begin = MPI_Wtime();
  std::vector<double> local_total;
  std::vector<double> round_max;
  for (;;) {
    local_total.assign(static_cast<std::size_t>(round), 0.0);
    if (inline_clock) {
      inline_clock_round(timed, iter, local_total, sums);
    } else {
      for (double& slot : local_total) timed_iteration(timed, iter++, slot, sums);
    }
    control.max_to_root(local_total, round_max);
    own_totals.insert(own_totals.end(), local_total.begin(), local_total.end());
    if (per_domain) {
      if (control.rank() == 0)
        all_totals.assign(static_cast<std::size_t>(round) * static_cast<std::size_t>(control.size()), 0.0);
      MPI_Gather(local_total.data(), round, MPI_DOUBLE, all_totals.data(), round, MPI_DOUBLE, 0, control.comm());
      if (control.rank() == 0) {
        for (int d = 0; d < in.placement->num_domains(); ++d) {
          auto& dom = m.domain_samples_us[static_cast<std::size_t>(d)];
          for (int r = 0; r < round; ++r) {
            double worst = 0.0;
            for (int w = 0; w < control.size(); ++w) {
              if (in.placement->domain_of(w) != d) continue;
              worst = std::max(worst, all_totals[static_cast<std::size_t>(w) * static_cast<std::size_t>(round) +
                                                 static_cast<std::size_t>(r)]);
            }
            dom.push_back(worst);
          }
        }
      }
    }
    std::string reason;
    int next_round = 0;
    if (control.rank() == 0) {
      m.samples_us.insert(m.samples_us.end(), round_max.begin(), round_max.end());
      const double elapsed = MPI_Wtime() - t_begin;
      reason = stop_reason(spec.stop, m.samples_us, elapsed);
      next_round = next_round_size(spec.stop, iter, round, elapsed);
    }
    reason = control.broadcast_string(reason);
    if (!reason.empty()) {
      m.stop_reason = reason;
      break;
    }
    int nr = next_round;
    MPI_Bcast(&nr, 1, MPI_INT, 0, control.comm());
    round = nr;
  }
  m.iterations = iter;

  // 4. Side operations (MoE: the counts exchange alone; ep-dp-concurrent: each part alone), timed
  // like a round of the case: `batch` launches back to back under --timing pipelined, so that a
  // ratio against the case's time compares like with like.
  for (const auto& op : coll.side_operations(m.shape)) {
    constexpr int kSideIters = 20;
    std::vector<double> local(kSideIters, 0.0);
    std::vector<double> worst;
    for (int i = 0; i < kSideIters; ++i) {
      mark(in, iter, Phase::waiting);
      control.barrier(in.progress);
      timer->start();
      for (int b = 0; b < batch; ++b) coll.launch_side(op, comm, buffers.send_ptr, buffers.recv_ptr, m.shape, ctx);
      comm.synchronize();
      timer->stop();
      local[static_cast<std::size_t>(i)] = timer->total_us() * slow / batch;
    }
    control.max_to_root(local, worst);
    if (control.rank() == 0) m.side_us[op] = stats::summarize(worst).p50;
  }

  // 5. Overlap mode: the collective alone, the load alone, and both at once (overlap_measure.hpp).
  if (compute) {
    OverlapOps ops;
    ops.chunks = m.overlap->chunks;
    ops.stages = m.overlap->stages;
    ops.launch = [&](int chunk, int stage) {
      if (stage < 0) {
        coll.launch(comm, buffers.send_ptr, buffers.recv_ptr, m.shape, ctx);
        return;
      }
      auto& cb = chunk_buffers[static_cast<std::size_t>(chunk)];
      coll.launch_stage(stage, comm, cb.send_ptr, cb.recv_ptr, chunk_shape, chunk_ctx);
    };
    ops.synchronize = [&comm] { comm.synchronize(); };
    ops.compute = compute.get();
    ops.progress = [&](int it) { mark(in, iter + it, Phase::waiting); };
    m.overlap->samples = time_overlap(ops, control, spec.stop, in.progress);
    m.overlap->compute_wrong_by_rank = control.gather(compute->check());
  }

  const double mean = iter > 0 ? sums.total / iter : 0.0;
  const double wait = iter > 0 ? sums.inside / iter : 0.0;
  m.rank_mean_us = control.gather(mean);
  m.rank_max_us = control.gather(sums.max_total);
  m.rank_wait_us = control.gather(wait);
  m.rank_p50_us = control.gather(own_totals.empty() ? 0.0 : stats::summarize(own_totals).p50);
  return m;
}

}  // namespace collbench::run
