// Sweep runner.
#include "collbench/run/runner.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "collbench/backend/hierarchical.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/table.hpp"
#include "collbench/run/measure.hpp"
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

// Algorithms a case can run with; others become waived records with the reason.
std::optional<std::string> algo_waiver(const plan::Case& c, const Placement& placement) {
  if (c.algo == "hierarchical") {
    if (c.scope != Scope::global) return std::string("hierarchical spans domains: use --scope global");
    return backend::hierarchical_waiver(c.collective, placement.uniform(), placement.num_domains());
  }
  if (c.backend == "mpi" && c.algo != "auto" && c.algo != "flat") {
    return fmt::format("algorithm '{}' is not available on the mpi backend (it runs: auto, flat, hierarchical)",
                       c.algo);
  }
  return std::nullopt;
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

void fill_measurement(record::CaseRecord& r, const Measurement& m, const coll::Collective& coll, int comm_size,
                      std::size_t max_kept) {
  const auto summary = stats::summarize(m.samples_us);
  r.iterations = m.iterations;
  r.time_us = record::TimeStats::from(summary);
  r.samples_us.assign(m.samples_us.begin(),
                      m.samples_us.begin() + static_cast<std::ptrdiff_t>(std::min(max_kept, m.samples_us.size())));
  r.samples_dropped = m.samples_us.size() - r.samples_us.size();
  r.per_rank = record::PerRank{m.rank_mean_us, m.rank_max_us, m.rank_wait_us};
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

RunSummary Runner::run(const plan::Sweep& sweep) {
  Control control;
  const ProcessInfo info = gather_process_info(control);
  const bool root = control.rank() == 0;
  std::string placement_warning;
  const Placement placement = resolve_placement(info, options_.placement, std::nullopt, placement_warning);
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
    coll::find_collective(c.collective);
    if (c.backend == "mpi" && c.buffers != "host" && c.buffers != "plain") {
      throw InputError(fmt::format("--buffers {} is not available on the mpi backend; accepted: host", c.buffers));
    }
  }

  const std::string run_id = control.broadcast_string(root ? new_run_id() : std::string{});
  const nlohmann::json config = sweep_config_json(sweep, placement, progress_name);

  // Output file: opened on rank 0, with --resume/--force rules; all ranks agree on the outcome.
  std::unique_ptr<record::JsonlWriter> writer;
  std::set<std::string> done_keys;
  on_root_agreed(control, [&] {
    if (!options_.out_path) return;
    if (options_.out_mode == record::OpenMode::resume) {
      if (::access(options_.out_path->c_str(), F_OK) == 0) {
        const auto existing = record::read_results(*options_.out_path);
        if (existing.header && existing.header->config != config) {
          throw InputError(fmt::format("--resume: '{}' was written by a different configuration (sweep, placement "
                                       "or settings differ); use --force to replace it or another --out file",
                                       *options_.out_path));
        }
        for (const auto& rec : existing.cases) done_keys.insert(rec.case_key);
        for (const auto& w : existing.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
      }
    }
    writer = std::make_unique<record::JsonlWriter>(*options_.out_path, options_.out_mode);
  });

  std::map<std::string, BackendSet> backends;
  auto backend_for = [&](const plan::Case& c) -> BackendSet& {
    auto it = backends.find(c.backend);
    if (it != backends.end()) return it->second;
    backend::BackendOptions bo;
    bo.progress = progress;
    bo.buffers = c.buffers;
    BackendSet set;
    set.backend = backend::make_backend(c.backend, bo);
    set.world = set.backend->world();
    set.domain = set.backend->split(my_domain, info.rank);
    set.cross = set.backend->split(my_local_index, my_domain);
    set.hierarchical = std::make_unique<backend::HierarchicalComm>(*set.backend, *set.domain, *set.cross, *set.world);
    return backends.emplace(c.backend, std::move(set)).first->second;
  };

  // Run header.
  record::RunHeader header;
  if (root) {
    header.run_id = run_id;
    header.started_at = utc_now_iso8601();
    header.tool_version = build::kVersion;
    header.git_sha = build::kGitSha;
    header.backends_built = split_list(std::string(build::kBackends) == "" ? "mpi" : [] {
      std::string b = build::kBackends;
      for (auto& ch : b) ch = ch == ' ' ? ',' : ch;
      return b;
    }(), "backends");
    header.argv = options_.argv;
    header.config = config;
    header.launcher = detect_launcher();
    header.mpi_library = backend::mpi_library_version();
    header.hosts = info.hosts;
    header.env = relevant_env();
    header.system = sweep.system ? nlohmann::json{{"name", *sweep.system}, {"digest", nullptr}} : nlohmann::json(nullptr);
    if (!faults.empty()) header.fault = faults.text();
    if (writer && done_keys.empty()) writer->write(record::to_json(header));
  }

  RunSummary summary;
  const bool tty = isatty(fileno(stderr)) != 0;
  std::optional<record::CaseRecord> previous_printed;
  if (root && options_.format == "csv") std::fputs(report::csv_header().c_str(), stdout);

  for (std::size_t i = 0; i < sweep.cases.size(); ++i) {
    const plan::Case& c = sweep.cases[i];
    const coll::Collective& coll = coll::find_collective(c.collective);
    BackendSet& bs = backend_for(c);
    backend::Comm& comm = c.algo == "hierarchical" ? *bs.hierarchical
                          : c.scope == Scope::global  ? *bs.world
                                                      : *bs.domain;
    // The record describes rank 0's communicator (domain 0 under scope=domain).
    int comm_size = comm.size();
    MPI_Bcast(&comm_size, 1, MPI_INT, 0, control.comm());
    const coll::Shape shape0 = coll.shape(c.bytes, c.dtype, 0, comm_size);
    record::CaseRecord rec = skeleton(c, coll, shape0, placement, comm_size, run_id);
    rec.extra["progress"] = progress_name;
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

    std::optional<std::string> waiver = algo_waiver(c, placement);
    if (!waiver && c.in_place && !coll.supports_in_place()) {
      waiver = fmt::format("{} has no in-place form", c.collective);
    }
    if (waiver) {
      rec.status = "waived";
      rec.reason = *waiver;
      rec.stop_reason = "waived";
      ++summary.cases_waived;
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
      const Measurement m = measure(in);
      if (root) fill_measurement(rec, m, coll, comm_size, options_.max_samples_kept);
      const std::string used = comm.algo_used();
      if (!used.empty()) rec.algo_used = used;
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
      std::fputs((record::to_json(rec).dump() + "\n").c_str(), stdout);
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
  summary.cases_failed = failed;
  return summary;
}

}  // namespace collbench::run
