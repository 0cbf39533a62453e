// Sweep runner.
#include "collbench/run/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "collbench/backend/hierarchical.hpp"
#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/backend/registry.hpp"
#ifdef COLLBENCH_HAVE_NCCL
#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"
#endif
#include "collbench/coll/collective.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/git_sha.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/overlap/spec.hpp"
#include "collbench/report/table.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/watchdog.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::run {
namespace {

// Runs f on rank 0; if it throws a collbench Error, every rank throws the same error.
template <class F>
void on_root_agreed(const Control& control, F&& f) {
  std::string message;
  int code = 0;
  if (control.rank() == 0) {
    try {
      f();
    } catch (const Error& e) {
      message = e.what();
      code = static_cast<int>(e.code());
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, control.comm());
  message = control.broadcast_string(message);
  if (code == static_cast<int>(ExitCode::bad_input)) throw InputError(message);
  if (code != 0) throw Error(static_cast<ExitCode>(code), message);
}

// What differs between the configuration stored in a results file and the one about to run,
// in words, for the --resume refusal ("domain_sizes [2] vs [1,1]; case 3: bytes 4096 vs 8192").
std::string describe_config_difference(const nlohmann::json& stored, const nlohmann::json& now) {
  // Values from YAML may hold bytes that are not UTF-8: print them as the results writer does.
  const auto text = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::vector<std::string> parts;
  if (!stored.is_object()) return "the stored configuration is not an object";
  for (const auto& [key, value] : now.items()) {
    const auto it = stored.find(key);
    if (it == stored.end()) {
      parts.push_back(fmt::format("'{}' is not in the file", key));
    } else if (*it != value) {
      if (key == "cases" && it->is_array() && value.is_array()) {
        if (it->size() != value.size()) {
          parts.push_back(fmt::format("{} case(s) in the file vs {} now", it->size(), value.size()));
          continue;
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
          if ((*it)[i] == value[i]) continue;
          std::vector<std::string> fields;
          for (const auto& [field, v] : value[i].items()) {
            const auto f = (*it)[i].find(field);
            if (f == (*it)[i].end() || *f != v) {
              fields.push_back(fmt::format("{} {} vs {}", field, f == (*it)[i].end() ? "(absent)" : text(*f), text(v)));
            }
          }
          parts.push_back(fmt::format("case {}: {}", i, join(fields, ", ")));
          break;  // the first differing case is enough to see why
        }
      } else {
        parts.push_back(fmt::format("{} {} vs {}", key, text(*it), text(value)));
      }
    }
  }
  for (const auto& [key, value] : stored.items()) {
    if (!now.contains(key)) parts.push_back(fmt::format("'{}' is only in the file", key));
  }
  return parts.empty() ? "no field differs" : join(parts, "; ");
}

// What a simulation (SimGrid SMPI, docs/simulation.md) does not model: waived with the reason.
std::optional<std::string> simulation_waiver(const plan::Case& c) {
  if (!backend::sim::active()) return std::nullopt;
  if (c.algo == "nvls" || c.algo == "nvlstree" || c.algo == "cb-multimem") {
    return fmt::format("simulation: SMPI models no in-switch reduction (NVLink SHARP), so '{}' cannot be simulated",
                       c.algo);
  }
  if (!c.overlap.empty()) {
    return std::string("simulation: --overlap's compute load runs on host time, which does not advance the simulated "
                       "clock");
  }
  return std::nullopt;
}

// The run header's `simulated` object (null for a measured run).
nlohmann::json simulated_json() {
  const auto sim = backend::sim::info();
  if (!sim) return nullptr;
  return {{"engine", sim->engine},         {"version", sim->version},
          {"platform", sim->platform},     {"platform_sha256", sim->platform_sha256},
          {"config", sim->config},         {"shared_buffers", sim->shared_buffers},
          {"watchdog", sim->watchdog}};
}

// Algorithms a case can run with; others become waived records with the reason.
std::optional<std::string> algo_waiver(const plan::Case& c, const Placement& placement) {
  if (auto sim = simulation_waiver(c)) return sim;
  if (c.algo == "hierarchical") {
    if (c.scope != Scope::global) return std::string("hierarchical spans domains: use --scope global");
    return backend::hierarchical_waiver(c.collective, placement.uniform(), placement.num_domains());
  }
  if (c.backend == "mpi" && c.algo != "auto" && c.algo != "flat") {
    return fmt::format("algorithm '{}' is not available on the mpi backend (it runs: auto, flat, hierarchical)",
                       c.algo);
  }
#ifdef COLLBENCH_HAVE_NCCL
  if (c.backend == "nccl") {
    if (c.graph > 0) return std::string("CUDA-graph replay (--graph) is not implemented yet on the nccl backend");
    return backend::nccl::nccl_algo_waiver(c.algo, c.collective);
  }
#endif
  return std::nullopt;
}

// Backends are created per (backend, algorithm setting, buffer kind): NCCL reads NCCL_ALGO and
// NCCL_PROTO when a communicator is created, and registered/symmetric buffers belong to it.
std::string backend_algo(const plan::Case& c) {
  return c.algo == "hierarchical" || c.algo == "flat" ? std::string("auto") : c.algo;
}
// Overlap mode on MPI waits for every collective with non-blocking calls + MPI_Test polling
// (yield), so its own backend (docs/overlap.md).
bool polls_for_overlap(const plan::Case& c) { return c.backend == "mpi" && !c.overlap.empty(); }
std::string backend_key(const plan::Case& c) {
  if (c.backend == "mpi") return polls_for_overlap(c) ? "mpi|overlap" : "mpi";
  return c.backend + "|" + backend_algo(c) + "|" + c.buffers;
}

struct BackendSet {
  std::unique_ptr<backend::Backend> backend;
  std::unique_ptr<backend::Comm> world;
  std::unique_ptr<backend::Comm> domain;
  std::unique_ptr<backend::Comm> cross;  // ranks with the same local index, one per domain
  std::unique_ptr<backend::HierarchicalComm> hierarchical;
};

record::CaseRecord skeleton(const plan::Case& c, const coll::Collective& coll, const coll::Shape& shape,
                            const Placement& placement, int comm_size, const std::string& run_id) {
  record::CaseRecord r;
  r.run_id = run_id;
  r.collective = c.collective;
  if (coll.has_redop()) r.redop = std::string(to_string(c.redop));
  r.dtype = std::string(to_string(c.dtype));
  r.backend = c.backend;
  r.algo_requested = c.algo;
  r.scope = std::string(to_string(c.scope));
  r.in_place = c.in_place;
  r.timing = std::string(to_string(c.timing));
  r.buffers = c.buffers;
  r.graph = c.graph;
  r.bytes = shape.bytes;
  r.count = shape.count;
  r.bytes_per_rank_send = shape.bytes_per_rank_send;
  r.bytes_per_rank_recv = shape.bytes_per_rank_recv;
  r.bytes_max_rank = shape.bytes_max_rank;
  r.bytes_logical_total = shape.bytes_logical_total;
  r.num_ranks = placement.num_ranks();
  r.domain_sizes = placement.domain_sizes;
  r.num_domains = placement.num_domains();
  r.warmup = c.stop.warmup;
  r.extra["comm_ranks"] = comm_size;
  r.case_key = record::make_case_key(r);
  return r;
}

// Scope domain over several domains: every domain's own statistics (its per-iteration time is
// the max over its ranks), so each domain can be judged separately.
nlohmann::json per_domain_json(const Measurement& m, const coll::Collective& coll, const std::vector<int>& sizes,
                               std::uint64_t bytes) {
  nlohmann::json out = nlohmann::json::array();
  int first = 0;
  for (std::size_t d = 0; d < m.domain_samples_us.size() && d < sizes.size(); ++d) {
    const auto s = stats::summarize(m.domain_samples_us[d]);
    const double algbw = gbps(static_cast<double>(bytes), s.p50);
    out.push_back({{"domain", d},
                   {"first_rank", first},
                   {"num_ranks", sizes[d]},
                   {"iterations", m.domain_samples_us[d].size()},
                   {"time_us",
                    {{"p50", s.p50}, {"p5", s.p5}, {"p95", s.p95}, {"min", s.min}, {"max", s.max}, {"mean", s.mean},
                     {"cv", s.cv}, {"ci95_low", s.ci95_low}, {"ci95_high", s.ci95_high}}},
                   {"algbw_gbps", algbw},
                   {"busbw_gbps", algbw * coll.busbw_factor(sizes[d])}});
    first += sizes[d];
  }
  return out;
}

void fill_measurement(record::CaseRecord& r, const Measurement& m, const coll::Collective& coll, int comm_size,
                      std::size_t max_kept) {
  const auto summary = stats::summarize(m.samples_us);
  r.iterations = m.iterations;
  r.time_us = record::TimeStats::from(summary);
  r.samples_us.assign(m.samples_us.begin(),
                      m.samples_us.begin() + static_cast<std::ptrdiff_t>(std::min(max_kept, m.samples_us.size())));
  r.samples_dropped = m.samples_us.size() - r.samples_us.size();
  r.per_rank = record::PerRank{m.rank_mean_us, m.rank_max_us, m.rank_wait_us};
  if (!m.rank_p50_us.empty()) r.extra["per_rank_p50_us"] = m.rank_p50_us;
  if (!m.domain_samples_us.empty()) r.extra["per_domain"] = per_domain_json(m, coll, r.domain_sizes, r.bytes);
  r.stop_reason = m.stop_reason;
  r.algbw_gbps = gbps(static_cast<double>(r.bytes), summary.p50);
  r.busbw_gbps = r.algbw_gbps * coll.busbw_factor(comm_size);
  r.checked = m.checked;
  for (std::size_t rank = 0; rank < m.wrong_by_rank.size(); ++rank) {
    if (m.wrong_by_rank[rank] > 0) r.wrong_by_rank[static_cast<int>(rank)] = m.wrong_by_rank[rank];
    r.wrong_total += m.wrong_by_rank[rank];
  }
  if (r.wrong_total > 0) {
    r.status = "failed";
    std::string ranks;
    for (const auto& [rank, n] : r.wrong_by_rank) ranks += fmt::format("{}{} on rank {}", ranks.empty() ? "" : ", ", n, rank);
    r.reason = fmt::format("{} wrong element(s): {}", r.wrong_total, ranks);
  }
}

// Bound, expected value and efficiency from the system profile (issue 3). A case the model
// does not cover says why; a run faster than its bound is flagged, never hidden.
void annotate_with_model(record::CaseRecord& r, const plan::Case& c, const Placement& placement,
                         const model::SystemProfile& system) {
  model::CaseGeometry g;
  g.collective = c.collective;
  g.algo = c.algo;
  g.dtype = c.dtype;
  g.bytes = r.bytes;
  g.placement = placement;
  g.scope = c.scope;
  const auto outcome = model::model_case(system, g);
  if (!outcome.estimate || !r.time_us) {
    r.extra["model_note"] = outcome.why_not.empty() ? std::string("not measured") : outcome.why_not;
    return;
  }
  const auto& e = *outcome.estimate;
  record::ModelFields mf;
  mf.system = system.name;
  mf.bound_time_us = e.bound_time_us;
  mf.bound_algbw_gbps = e.bound_algbw_gbps;
  mf.bound_busbw_gbps = e.bound_busbw_gbps;
  mf.expected_time_us = e.expected_time_us;
  mf.expected_busbw_gbps = e.expected_busbw_gbps;
  mf.wire_bytes_per_rank = e.wire_bytes_per_rank;
  const auto check = model::check_against_bound(e, r.time_us->p50);
  mf.efficiency = check.efficiency;
  r.model = mf;
  if (!e.algo_modelled.empty()) r.extra["model_algo"] = e.algo_modelled;
  if (check.beats_bound) {
    r.extra["bound_check"] = check.beyond_margin
                                 ? "faster than the bound beyond the profile's margin: the model or profile is wrong"
                                 : "faster than the bound within the calibration margin (noise)";
  }
}

#ifdef COLLBENCH_HAVE_NCCL
// In-switch algorithms (nvls, nvlstree, cb-multimem): accumulation type, modelled wire bytes per
// GPU and the busbw note (backend/nccl/nvls_host.hpp; docs/results-format.md).
void annotate_in_switch(record::CaseRecord& r, const plan::Case& c, int comm_size) {
  const auto a = backend::nccl::in_switch_accounting(c.algo, c.collective, c.dtype, static_cast<double>(r.bytes),
                                                     comm_size);
  if (a.accumulation_dtype) r.extra["accumulation_dtype"] = *a.accumulation_dtype;
  if (a.wire_bytes_per_gpu) r.extra["wire_bytes_per_gpu"] = *a.wire_bytes_per_gpu;
  if (a.busbw_note) r.extra["busbw_note"] = *a.busbw_note;
}
#endif

// Irregular exchanges (MoE): the bound for the case's traffic matrix (model/traffic.hpp).
void annotate_with_traffic_model(record::CaseRecord& r, const model::TrafficMatrix& traffic, const Placement& placement,
                                 const model::SystemProfile& system) {
  if (!r.time_us) {
    r.extra["model_note"] = std::string("not measured");
    return;
  }
  const auto t = model::estimate_from_traffic(system, traffic, placement);
  const auto& e = t.estimate;
  record::ModelFields mf;
  mf.system = system.name;
  mf.bound_time_us = e.bound_time_us;
  mf.bound_algbw_gbps = e.bound_algbw_gbps;
  mf.bound_busbw_gbps = e.bound_busbw_gbps;
  mf.expected_time_us = e.expected_time_us;
  mf.expected_busbw_gbps = e.expected_busbw_gbps;
  mf.wire_bytes_per_rank = e.wire_bytes_per_rank;
  const auto check = model::check_against_bound(e, r.time_us->p50);
  mf.efficiency = check.efficiency;
  r.model = mf;
  r.extra["model_algo"] = e.algo_modelled;
  r.extra["model_note"] = e.note;
  if (check.beats_bound) {
    r.extra["bound_check"] = check.beyond_margin
                                 ? "faster than the bound beyond the profile's margin: the model or profile is wrong"
                                 : "faster than the bound within the calibration margin (noise)";
  }
}

// Concurrent parts (ep-dp-concurrent): each part alone (its side operation "<name>_alone"),
// all at once (the case's p50), interference = both / slowest part alone, and the bound: the
// slowest part's, as the parts use disjoint links (docs/model.md, "Concurrent parts").
void annotate_concurrent(record::CaseRecord& r, const std::vector<coll::ConcurrentPart>& parts,
                         const std::map<std::string, double>& side_us, const plan::Case& c,
                         const model::SystemProfile* system) {
  nlohmann::json j = nlohmann::json::object();
  double slowest_alone = 0.0;
  bool all_alone = true;
  for (const auto& p : parts) {
    j[p.name + "_bytes"] = p.bytes;
    j[p.name + "_ranks"] = p.ranks;
    const auto it = side_us.find(p.name + "_alone");
    if (it == side_us.end()) {
      j[p.name + "_alone_us"] = nullptr;
      all_alone = false;
    } else {
      j[p.name + "_alone_us"] = it->second;
      slowest_alone = std::max(slowest_alone, it->second);
    }
  }
  j["both_us"] = r.time_us ? nlohmann::json(r.time_us->p50) : nlohmann::json(nullptr);
  j["interference"] = all_alone && r.time_us && slowest_alone > 0.0 ? nlohmann::json(r.time_us->p50 / slowest_alone)
                                                                   : nlohmann::json(nullptr);
  const auto set = [&] { r.extra["concurrent"] = j; };
  if (system == nullptr || !r.time_us) {
    if (!r.time_us) r.extra["model_note"] = std::string("not measured");
    set();
    return;
  }
  std::optional<model::Estimate> worst;
  double expected_us = 0.0;
  double wire = 0.0;
  std::vector<std::string> notes;
  for (const auto& p : parts) {
    model::CaseGeometry g;
    g.collective = p.collective;
    g.algo = "auto";
    g.dtype = c.dtype;
    g.bytes = p.bytes;
    g.placement = p.placement;
    g.scope = p.scope;
    const auto out = model::model_case(*system, g);
    if (!out.estimate) {
      r.extra["model_note"] = fmt::format("part {} ({} of {} B) is not modelled: {}", p.name, p.collective, p.bytes,
                                          out.why_not);
      set();
      return;
    }
    j[p.name + "_bound_us"] = out.estimate->bound_time_us;
    j[p.name + "_expected_us"] = out.estimate->expected_time_us;
    expected_us = std::max(expected_us, out.estimate->expected_time_us);
    wire += out.estimate->wire_bytes_per_rank;
    notes.push_back(fmt::format("{}: {} bound {:.4g} us", p.name, p.collective, out.estimate->bound_time_us));
    if (!worst || out.estimate->bound_time_us > worst->bound_time_us) worst = out.estimate;
  }
  record::ModelFields mf;
  mf.system = system->name;
  mf.bound_time_us = worst->bound_time_us;
  mf.bound_algbw_gbps = gbps(static_cast<double>(r.bytes), worst->bound_time_us);
  mf.expected_time_us = expected_us;
  mf.wire_bytes_per_rank = wire;
  const auto check = model::check_against_bound(*worst, r.time_us->p50);
  mf.efficiency = check.efficiency;
  r.model = mf;  // busbw fields 0: no bus bandwidth for concurrent parts, judged on time
  r.extra["model_algo"] = std::string("concurrent");
  r.extra["model_note"] = "concurrent parts on disjoint links: bound = the slowest part (" + join(notes, "; ") + ")";
  if (check.beats_bound) {
    r.extra["bound_check"] = check.beyond_margin
                                 ? "faster than the bound beyond the profile's margin: the model or profile is wrong"
                                 : "faster than the bound within the calibration margin (noise)";
  }
  set();
}

}  // namespace

nlohmann::json sweep_config_json(const plan::Sweep& sweep, const Placement& placement, const std::string& progress) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : sweep.cases) {
    cases.push_back({{"collective", c.collective},
                     {"redop", to_string(c.redop)},
                     {"dtype", to_string(c.dtype)},
                     {"backend", c.backend},
                     {"algo", c.algo},
                     {"scope", to_string(c.scope)},
                     {"in_place", c.in_place},
                     {"timing", to_string(c.timing)},
                     {"buffers", c.buffers},
                     {"graph", c.graph},
                     {"root", c.root},
                     {"check", c.check},
                     {"bytes", c.bytes},
                     {"warmup", c.stop.warmup},
                     {"min_iters", c.stop.min_iters},
                     {"max_iters", c.stop.max_iters},
                     {"min_time_s", c.stop.min_time_s},
                     {"max_time_s", c.stop.max_time_s},
                     {"max_noise", c.stop.max_noise},
                     {"batch", c.stop.batch},
                     {"params", c.params}});
    // Only when set, so that files written before the overlap mode still --resume.
    if (!c.overlap.empty()) cases.back()["overlap"] = c.overlap;
    if (c.overlap_chunks > 0) cases.back()["overlap_chunks"] = c.overlap_chunks;
  }
  return {{"name", sweep.name},
          {"source", sweep.source},
          {"system", sweep.system ? nlohmann::json(*sweep.system) : nlohmann::json(nullptr)},
          {"domain_sizes", placement.domain_sizes},
          {"placement_source", placement.source},
          {"progress", progress},
          {"cases", cases}};
}

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {}

RunSummary Runner::run(const plan::Sweep& requested) {
  // Buffers default per backend: host memory for mpi, plain device memory for nccl.
  plan::Sweep sweep = requested;
  for (auto& c : sweep.cases) {
#ifdef COLLBENCH_HAVE_NCCL
    if (c.backend == "nccl" && c.buffers == "host") c.buffers = backend::nccl::default_nccl_buffers(c.algo);
#else
    if (c.backend == "nccl" && c.buffers == "host") c.buffers = "plain";
#endif
    // Families whose payload type comes from their parameters (MoE: the workload's wire format).
    if (const auto d = coll::find_collective(c.collective).case_dtype(c.params)) c.dtype = *d;
  }
  Control control;
  const ProcessInfo info = gather_process_info(control);
  const bool root = control.rank() == 0;
  // System profile for bounds: --system / the sweep's `system:`, else a calibrated cpu-local.
  std::optional<model::SystemProfile> system;
  if (sweep.system) {
    system = model::load_system_profile(*sweep.system);
  } else {
    const auto known = model::list_system_profiles();
    if (std::find(known.begin(), known.end(), "cpu-local") != known.end()) {
      system = model::load_system_profile("cpu-local");
    } else if (root && options_.format != "none") {
      std::fprintf(stderr,
                   "collbench: note: no bounds (%%bound): pass --system NAME, or run 'mpiexec -n 2 collbench "
                   "calibrate' once to create the cpu-local profile\n");
    }
  }
  std::optional<int> profile_domain;
  if (system && system->scale_up.domain_size > 0) profile_domain = system->scale_up.domain_size;
  std::string placement_warning;
  const Placement placement = resolve_placement(info, options_.placement, profile_domain, placement_warning);
  const backend::Progress progress = choose_progress(options_.progress, info);
  const std::string progress_name = progress == backend::Progress::spin ? "spin" : "yield";
  const FaultPlan faults = FaultPlan::from_env();
  const int my_domain = placement.domain_of(info.rank);
  int my_local_index = 0;  // position of this rank inside its domain
  for (int r = 0; r < info.rank; ++r) my_local_index += placement.domain_of(r) == my_domain ? 1 : 0;

  if (root && !placement_warning.empty() && placement.num_domains() > 0) {
    std::fprintf(stderr, "collbench: note: %s\n", placement_warning.c_str());
  }
  if (root && options_.progress == "auto" && progress == backend::Progress::yield) {
    std::fprintf(stderr, "collbench: note: %d ranks share %d core(s) on this host: using --progress yield\n",
                 info.ranks_on_host, info.cores_available);
  }

  // Validate every case up front (same outcome on every rank: pure checks).
  for (const auto& c : sweep.cases) {
    coll::find_collective(c.collective).check_params(c.params);
    if (!c.overlap.empty()) {
      overlap::parse_compute_spec(c.overlap);
      const int stages = coll::find_collective(c.collective).num_stages();
      if (c.overlap_chunks > 0 && stages > 2) {
        throw InputError(fmt::format("--overlap-chunks: {} has {} stages; the pipeline takes 1 or 2", c.collective, stages));
      }
      if (c.overlap_chunks > 0) pipeline_chunk_case(c, c.overlap_chunks);
    } else if (c.overlap_chunks > 0) {
      throw InputError("--overlap-chunks needs --overlap COMPUTE (e.g. --overlap gemm:workload=deepseek-v3)");
    }
    if (c.backend == "mpi" && c.buffers != "host" && c.buffers != "plain") {
      throw InputError(fmt::format("--buffers {} is not available on the mpi backend; accepted: host", c.buffers));
    }
  }

  const std::string run_id = control.broadcast_string(root ? new_run_id() : std::string{});
  const nlohmann::json config = sweep_config_json(sweep, placement, progress_name);

  // Output file: opened on rank 0, with --resume/--force rules; all ranks agree on the outcome.
  std::unique_ptr<record::JsonlWriter> writer;
  std::set<std::string> done_keys;
  bool has_header = false;  // --resume of a file that already starts with its run header
  on_root_agreed(control, [&] {
    if (!options_.out_path) return;
    if (options_.out_mode == record::OpenMode::resume) {
      if (::access(options_.out_path->c_str(), F_OK) == 0) {
        const auto existing = record::read_results(*options_.out_path);
        if (!existing.header && !existing.cases.empty()) {
          throw InputError(fmt::format("--resume: '{}' holds cases but no run header, so its configuration cannot "
                                       "be checked; use --force to replace it or another --out file",
                                       *options_.out_path));
        }
        if (existing.header && existing.header->config != config) {
          throw InputError(fmt::format("--resume: '{}' was written by a different configuration ({}); use --force "
                                       "to replace it or another --out file",
                                       *options_.out_path,
                                       describe_config_difference(existing.header->config, config)));
        }
        has_header = existing.header.has_value();
        for (const auto& rec : existing.cases) done_keys.insert(rec.case_key);
        for (const auto& w : existing.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
      }
    }
    writer = std::make_unique<record::JsonlWriter>(*options_.out_path, options_.out_mode);
  });

  std::map<std::string, BackendSet> backends;
  auto backend_for = [&](const plan::Case& c) -> BackendSet& {
    const std::string key = backend_key(c);
    auto it = backends.find(key);
    if (it != backends.end()) return it->second;
    backend::BackendOptions bo;
    bo.progress = polls_for_overlap(c) ? backend::Progress::yield : progress;
    bo.buffers = c.buffers;
    bo.algo = backend_algo(c);
    BackendSet set;
    set.backend = backend::make_backend(c.backend, bo);
    set.world = set.backend->world();
    set.domain = set.backend->split(my_domain, info.rank);
    set.cross = set.backend->split(my_local_index, my_domain);
    set.hierarchical = std::make_unique<backend::HierarchicalComm>(*set.backend, *set.domain, *set.cross, *set.world);
    return backends.emplace(key, std::move(set)).first->second;
  };

  // Create every backend the sweep needs now: a backend that cannot start (no GPU) fails before
  // anything is written, and the header can carry the library versions.
  for (const auto& c : sweep.cases) backend_for(c);

  std::vector<std::string> host_names;
  for (const auto& h : info.hosts) host_names.push_back(h.host);
  std::unique_ptr<Watchdog> watchdog;
  if (options_.watchdog) watchdog = std::make_unique<Watchdog>(host_names);
  const auto case_timeout = [this](const plan::Case& c) {
    return options_.timeout_s > 0 ? options_.timeout_s : default_timeout_s(c.bytes);
  };

  // Run header.
  record::RunHeader header;
  if (root) {
    header.run_id = run_id;
    header.started_at = utc_now_iso8601();
    header.tool_version = build::kVersion;
    header.git_sha = build::git_sha();
    header.backends_built = build::backends_built();
    header.argv = options_.argv;
    header.config = config;
    header.launcher = info.launcher;
    header.mpi_library = backend::mpi_library_version();
    header.hosts = info.hosts;
    for (const auto& [key, set] : backends) {
      const auto prov = set.backend->provenance();
      const auto get = [&prov](const std::string& k) -> std::optional<std::string> {
        const auto f = prov.find(k);
        return f == prov.end() || f->second.empty() ? std::nullopt : std::optional<std::string>(f->second);
      };
      if (!header.nccl_version) header.nccl_version = get("nccl_version");
      if (!header.cuda_runtime) header.cuda_runtime = get("cuda_runtime");
      if (!header.cuda_driver) header.cuda_driver = get("cuda_driver");
      for (auto& h : header.hosts) {
        const std::string prefix = "rank." + std::to_string(h.rank) + ".";
        if (!h.gpu_name) h.gpu_name = get(prefix + "gpu_name");
        if (!h.gpu_uuid) h.gpu_uuid = get(prefix + "gpu_uuid");
        if (!h.pci_bus_id) h.pci_bus_id = get(prefix + "pci_bus_id");
        if (!h.nic) h.nic = get(prefix + "nic");
      }
    }
    header.env = relevant_env();
    header.system = system ? nlohmann::json{{"name", system->name}, {"digest", system->digest}, {"path", system->path}}
                           : nlohmann::json(nullptr);
    if (!faults.empty()) header.fault = faults.text();
    header.simulated = simulated_json();
    if (writer && !has_header) writer->write(record::to_json(header));
  }

  RunSummary summary;
  const bool tty = isatty(fileno(stderr)) != 0;
  std::optional<record::CaseRecord> previous_printed;
  if (root && options_.format == "csv") std::fputs(report::csv_header().c_str(), stdout);

  for (std::size_t i = 0; i < sweep.cases.size(); ++i) {
    const plan::Case& c = sweep.cases[i];
    const coll::Collective& coll = coll::find_collective(c.collective);
    if (watchdog) {
      watchdog->set_case_label(fmt::format("{} {} B {}", c.collective, c.bytes, to_string(c.dtype)));
      watchdog->at(static_cast<int>(i), -1, Phase::host, case_timeout(c));
    }
    BackendSet& bs = backend_for(c);
    // Families that run on the levels at once (ep-dp-concurrent) get them whatever the algorithm.
    const bool levels = coll.uses_levels() && c.scope == Scope::global;
    backend::Comm& comm = c.algo == "hierarchical" || levels ? *bs.hierarchical
                          : c.scope == Scope::global          ? *bs.world
                                                              : *bs.domain;
    // The record describes rank 0's communicator (domain 0 under scope=domain).
    int comm_size = comm.size();
    MPI_Bcast(&comm_size, 1, MPI_INT, 0, control.comm());
    // Waivers first: a case that cannot run here may not have a shape either.
    const coll::CaseContext ctx0 = case_context(c, 0, comm_size, &placement);
    std::optional<std::string> waiver = algo_waiver(c, placement);
    if (!waiver && c.in_place && !coll.supports_in_place()) {
      waiver = fmt::format("{} has no in-place form", c.collective);
    }
    if (!waiver && coll.uses_levels() && c.scope != Scope::global) {
      waiver = fmt::format("{} spans domains (all-to-all inside each, all-reduce across them): use --scope global",
                           c.collective);
    }
    if (!waiver) waiver = coll.waiver(ctx0);
    if (!waiver && levels) waiver = comm.group_waiver();
#ifdef COLLBENCH_HAVE_NCCL
    // Capability of this machine for in-switch algorithms (collective over all ranks).
    if (!waiver && c.backend == "nccl") {
      waiver = backend::nccl::capability_waiver(*bs.backend, comm, c.collective, c.dtype, c.redop);
    }
#endif
    const coll::Shape shape0 = waiver ? coll::Shape{} : coll.shape_for(c.bytes, ctx0);
    record::CaseRecord rec = skeleton(c, coll, shape0, placement, comm_size, run_id);
    rec.simulated = backend::sim::active();
    std::string size_label = coll.size_label(shape0, ctx0);
    if (!c.overlap.empty()) {  // overlap cases stay distinct from the plain case of the same size
      size_label += fmt::format("{}overlap={}", size_label.empty() ? "" : ";", c.overlap);
      if (c.overlap_chunks > 0) size_label += fmt::format(";chunks={}", c.overlap_chunks);
    }
    if (!size_label.empty()) rec.case_key = record::make_case_key(rec, size_label);
    rec.workload = waiver ? nlohmann::json(nullptr) : coll.workload_record(shape0);
    const std::string case_progress = polls_for_overlap(c) ? std::string("yield") : progress_name;
    rec.extra["progress"] = case_progress;
    if (!faults.empty() && faults.affects_case(static_cast<int>(i))) rec.fault = faults.text();

    const bool skip = control.broadcast_flag(root && done_keys.count(rec.case_key) > 0);
    if (skip) {
      ++summary.cases_skipped;
      continue;
    }
    if (root && tty && options_.show_progress) {
      std::fprintf(stderr, "\r[%zu/%zu] %s %s %s ...", i + 1, sweep.cases.size(), c.collective.c_str(),
                   format_bytes(c.bytes).c_str(), to_string(c.dtype).data());
      std::fflush(stderr);
    }

    const auto waive = [&](const std::string& reason) {
      rec.status = "waived";
      rec.reason = reason;
      rec.stop_reason = "waived";
      ++summary.cases_waived;
    };
    if (waiver) {
      waive(*waiver);
    } else {
      MeasureInput in;
      in.spec = &c;
      in.collective = &coll;
      in.backend = bs.backend.get();
      in.comm = &comm;
      in.control = &control;
      in.progress = progress;
      in.faults = &faults;
      in.case_index = static_cast<int>(i);
      in.world_rank = info.rank;
      in.max_samples_kept = options_.max_samples_kept;
      in.watchdog = watchdog.get();
      in.timeout_s = case_timeout(c);
      in.placement = &placement;
      const Measurement m = measure(in);
      if (m.waived) {  // the library refused the case on every rank (backend::Unsupported)
        waive(*m.waived);
      } else if (root) {
        fill_measurement(rec, m, coll, comm_size, options_.max_samples_kept);
        if (m.overlap) {
          rec.overlap = overlap_record(*m.overlap, case_progress);
          if (const auto bad = rec.overlap["compute_wrong"].get<std::uint64_t>(); bad > 0 && rec.status != "failed") {
            rec.status = "failed";
            rec.reason = fmt::format("the compute load beside the collective computed {} wrong element(s)", bad);
          }
        }
#ifdef COLLBENCH_HAVE_NCCL
        if (c.backend == "nccl") annotate_in_switch(rec, c, comm_size);
#endif
        if (rec.workload.is_object()) {
          const auto cx = m.side_us.find("counts_exchange");
          if (cx != m.side_us.end()) rec.workload["counts_exchange_us"] = cx->second;
        }
        if (const auto parts = coll.concurrent_parts(shape0, ctx0); !parts.empty()) {
          annotate_concurrent(rec, parts, m.side_us, c, system ? &*system : nullptr);
        } else if (const auto traffic = coll.traffic(shape0)) {
          if (system) annotate_with_traffic_model(rec, *traffic, ctx0.placement, *system);
        } else if (system) {
          annotate_with_model(rec, c, placement, *system);
        }
      }
      const std::string used = m.waived ? std::string() : comm.algo_used();
      if (!used.empty() && !levels) rec.algo_used = used;  // levels: the library's own ops, not "hierarchical"
    }
    ++summary.cases_run;
    if (!root) continue;
    if (rec.status == "failed") ++summary.cases_failed;
    if (writer) writer->write(record::to_json(rec));
    if (tty && options_.show_progress) std::fputs("\r\033[K", stderr);
    if (options_.format == "table") {
      if (!previous_printed || report::needs_new_header(*previous_printed, rec)) {
        std::fputs(report::table_header(rec).c_str(), stdout);
      }
      std::fputs(report::table_row(rec).c_str(), stdout);
    } else if (options_.format == "jsonl") {
      const auto line = record::to_json(rec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      std::fputs(line.c_str(), stdout);
    } else if (options_.format == "csv") {
      std::fputs(report::csv_row(rec).c_str(), stdout);
    }
    std::fflush(stdout);
    previous_printed = rec;
    summary.records.push_back(std::move(rec));
  }
  if (root && options_.format == "table" && !summary.records.empty()) {
    std::fputs(report::table_footer(summary.records).c_str(), stdout);
    std::fflush(stdout);
  }
  int failed = summary.cases_failed;
  MPI_Bcast(&failed, 1, MPI_INT, 0, control.comm());
  if (watchdog) watchdog->at(-1, -1, Phase::idle, 0.0);
  summary.cases_failed = failed;
  return summary;
}

}  // namespace collbench::run
