// Sweep runner: a pipeline of named steps. prepare (once: profile, placement, validation, results
// file, backends without communicators, the case order, run header), then per case in that order:
// its communicator set (created at the set's first case), waive (what cannot run here, with the
// reason), measure, annotate (the record and the model beside it), emit (results file and
// console), and the set released after its last case (comm_sets.hpp, plan/comm_schedule.hpp).
#include "collbench/run/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <variant>

#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/backend/policy.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/plan/comm_schedule.hpp"
#include "collbench/report/console_writer.hpp"
#include "collbench/report/table.hpp"
#include "collbench/run/annotate.hpp"
#include "collbench/run/case_checks.hpp"
#include "collbench/run/case_waivers.hpp"
#include "collbench/run/comm_sets.hpp"
#include "collbench/run/control_row_gather.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/repeats.hpp"
#include "collbench/run/results_file.hpp"
#include "collbench/run/watchdog.hpp"

namespace collbench::run {
namespace {

// The run header's `simulated` object (null for a measured run).
nlohmann::json simulated_json() {
  const auto sim = backend::sim::info();
  if (!sim) return nullptr;
  return {{"engine", sim->engine},     {"version", sim->version},
          {"platform", sim->platform}, {"platform_sha256", sim->platform_sha256},
          {"config", sim->config},     {"shared_buffers", sim->shared_buffers},
          {"watchdog", sim->watchdog}};
}

// The sweep as it runs: buffers defaulted per backend (host memory for mpi, device memory for
// nccl), and the payload type of families that take it from their parameters (MoE: the
// workload's wire format).
plan::Sweep prepared_sweep(const plan::Sweep& requested) {
  plan::Sweep sweep = requested;
  for (auto& c : sweep.cases) {
    if (c.buffers == "host") c.buffers = backend::backend_policy(c.backend).default_buffers(c.algo);
    if (const auto d = coll::find_collective(c.collective).case_dtype(c.params)) c.dtype = *d;
  }
  return sweep;
}

// System profile for bounds: --system / the sweep's `system:`, else a calibrated cpu-local.
std::optional<model::SystemProfile> load_system(const plan::Sweep& sweep, bool note) {
  if (sweep.system) return model::load_system_profile(*sweep.system);
  const auto known = model::list_system_profiles();
  if (std::find(known.begin(), known.end(), "cpu-local") != known.end()) {
    return model::load_system_profile("cpu-local");
  }
  if (note) {
    std::fprintf(stderr,
                 "collbench: note: no bounds (%%bound): pass --system NAME, or run 'mpiexec -n 2 collbench "
                 "calibrate' once to create the cpu-local profile\n");
  }
  return std::nullopt;
}

// One case on its way through the pipeline.
struct CaseRun {
  std::size_t index = 0;     // in the sweep
  std::size_t position = 0;  // in the run order (the progress line counts these)
  const plan::Case* c = nullptr;
  const coll::Collective* coll = nullptr;
  BackendSet* bs = nullptr;
  backend::Comm* comm = nullptr;
  bool levels = false;  // a family that runs on the levels at once (ep-dp-concurrent)
  int comm_size = 0;    // rank 0's communicator (domain 0 under scope=domain)
  coll::CaseContext ctx0;
  std::optional<std::string> waiver;
  coll::Shape shape0;
  record::CaseRecord rec;
  std::string progress;  // spin | yield, as the case ran
};

// A case of a repeated run (--repeats k) between its passes.
struct PendingCase {
  CaseRun cr;
  bool active = false;  // measured in this run (not in the resumed file, not a repeated case key)
  bool waived = false;
  std::vector<RepeatResult> repeats;  // rank 0, one per pass so far
};

class SweepRun {
 public:
  SweepRun(const RunnerOptions& options, const plan::Sweep& requested);
  RunSummary run();

 private:
  // prepare
  void resolve_layout();
  void print_notes() const;
  void start_backends();
  void write_header();
  // per case
  void run_case(std::size_t position);
  void run_repeated();
  void repeat_case(PendingCase& p, std::size_t position, int pass);
  void release_after(std::size_t position);
  bool claim(const CaseRun& cr);
  CaseRun start_case(std::size_t position);
  void bind_comm(CaseRun& cr);
  void start_watchdog();
  void start_step(RunStartStep step);
  void waive_step(CaseRun& cr);
  std::optional<std::string> capability_waiver(CaseRun& cr);
  void make_record(CaseRun& cr);
  void show_progress(const CaseRun& cr, int pass = -1) const;
  void waive(record::CaseRecord& rec, const std::string& reason);
  void measure_step(CaseRun& cr);
  std::optional<Measurement> measure_once(CaseRun& cr);
  void annotate(CaseRun& cr, const Measurement& m, const std::vector<RepeatResult>* repeats = nullptr);
  void emit(record::CaseRecord rec);
  void finish();
  void record_communicators();

  const RunnerOptions& options_;
  plan::Sweep sweep_;
  Control control_;
  ProcessInfo info_;
  bool root_ = false;
  std::optional<model::SystemProfile> system_;
  Placement placement_;
  backend::Progress progress_ = backend::Progress::spin;
  std::string progress_name_;
  std::string placement_warning_;
  FaultPlan faults_;
  int my_domain_ = 0;
  int my_local_index_ = 0;  // position of this rank inside its domain
  std::string run_id_;
  nlohmann::json config_;
  ResultsFile results_;
  std::unique_ptr<CommSets> sets_;
  plan::CaseSchedule schedule_;             // the run order and when each set is released
  std::unique_ptr<Watchdog> own_watchdog_;  // this run's, unless the caller shares one
  Watchdog* watchdog_ = nullptr;            // the one in use, or none
  RunSummary summary_;
  bool tty_ = false;
  report::ConsoleMultiplex console_;    // --format / --layout (rank 0 writes)
  std::set<std::string> emitted_keys_;  // rank 0: case keys measured in this run
  int repeats_ = 0;                     // rank 0: cases dropped as repeats of an earlier case key

  [[nodiscard]] double case_timeout(const plan::Case& c) const {
    return options_.timeout_s > 0 ? options_.timeout_s : default_timeout_s(c.bytes);
  }
};

// ---- prepare ---------------------------------------------------------------------------------

SweepRun::SweepRun(const RunnerOptions& options, const plan::Sweep& requested)
    : options_(options), sweep_(prepared_sweep(requested)), info_(gather_process_info(control_)) {
  root_ = control_.rank() == 0;
  validate_repeats(sweep_, options_.repeats);  // before any note: a bad k is the only message
  start_watchdog();
  // --format files: decided once, on rank 0, whose file system the writers use.
  on_root_agreed(control_,
                 [&] { report::check_run_output_files(options_.outputs, options_.out_path, options_.out_mode); });
  console_ = report::ConsoleMultiplex(options_.outputs, options_.console);
  system_ = load_system(sweep_, root_ && !console_.silent());
  resolve_layout();
  print_notes();
  validate_cases(sweep_);
  check_verify_mode(options_.verify, sweep_);  // --verify device on a host-only backend: exit 2 now
  // Roots, sizes that round to 0 B, buffers against memory: before anything is allocated.
  start_step(RunStartStep::memory);
  if (watchdog_ && faults_.hang_at_start(info_.rank)) watchdog_->hang_here();  // COLLBENCH_FAULT=hang:...,start=1
  sweep_ = checked_sweep(sweep_, control_, info_, placement_);
  run_id_ = control_.broadcast_string(root_ ? new_run_id() : std::string{});
  config_ = sweep_config_json(sweep_, placement_, progress_name_);
  if (options_.repeats > 1) config_["repeats"] = options_.repeats;  // --resume continues only the same k
  start_step(RunStartStep::results_file);
  results_ = open_results_file(control_, options_.out_path, options_.out_mode, config_, faults_.text());
  summary_.cases_failed = results_.failed_before;  // earlier failures of a resumed file count
  start_step(RunStartStep::backends);
  start_backends();
  if (watchdog_) watchdog_->at(-1, -1, Phase::idle, 0.0);  // started: each case sets its own deadline
  write_header();
}

// The watchdog watches the run's start too (a rank held in its first CUDA or NVML call, or in a
// library load, would otherwise leave the others in their first collective for good): created
// first (collective), unless the caller shares one.
void SweepRun::start_watchdog() {
  if (options_.shared_watchdog != nullptr) {
    watchdog_ = options_.shared_watchdog;
  } else if (options_.watchdog) {
    own_watchdog_ = std::make_unique<Watchdog>(host_names(info_));
    watchdog_ = own_watchdog_.get();
  }
  start_step(RunStartStep::options);
}

void SweepRun::start_step(RunStartStep step) {
  if (watchdog_) watchdog_->at_run_start(step, options_.timeout_s > 0 ? options_.timeout_s : default_timeout_s(0));
}

void SweepRun::resolve_layout() {
  std::optional<int> profile_domain;
  if (system_ && system_->scale_up.domain_size > 0) profile_domain = system_->scale_up.domain_size;
  placement_ = resolve_placement(info_, options_.placement, profile_domain, placement_warning_);
  progress_ = choose_progress(options_.progress, info_);
  progress_name_ = progress_ == backend::Progress::spin ? "spin" : "yield";
  faults_ = FaultPlan::from_env();
  // accept and locate (measure_repeats) run several sweeps, each numbering its cases from 0.
  faults_.check_targets(info_.size,
                        options_.measure_repeats ? std::nullopt : std::optional<std::size_t>(sweep_.cases.size()));
  my_domain_ = placement_.domain_of(info_.rank);
  for (int r = 0; r < info_.rank; ++r) my_local_index_ += placement_.domain_of(r) == my_domain_ ? 1 : 0;
}

void SweepRun::print_notes() const {
  if (root_ && !placement_warning_.empty() && placement_.num_domains() > 0) {
    std::fprintf(stderr, "collbench: note: %s\n", placement_warning_.c_str());
  }
  if (root_ && options_.progress == "auto" && progress_ == backend::Progress::yield) {
    std::fprintf(stderr, "collbench: note: %d ranks share %d core(s) on this host: using --progress yield\n",
                 info_.ranks_on_host, info_.cores_available);
  }
}

// Every backend the sweep needs, started now without a communicator: a backend that cannot start
// (no GPU) fails before anything is written, and the header carries the library versions. The
// cases' order: each set's cases together (plan/comm_schedule.hpp), except for accept and locate,
// whose repetitions interleave on purpose.
void SweepRun::start_backends() {
  SetLayout layout;
  layout.world_rank = info_.rank;
  layout.domain = my_domain_;
  layout.local_index = my_local_index_;
  layout.consecutive = placement_.uniform() && placement_.interleaved.empty();
  layout.progress = progress_;
  sets_ = std::make_unique<CommSets>(layout);
  sets_->start_backends(sweep_.cases);
  std::vector<std::string> keys;
  for (const auto& c : sweep_.cases) keys.push_back(set_key(c));
  schedule_ = plan::schedule_cases(keys, options_.measure_repeats);
}

void SweepRun::write_header() {
  if (!root_) return;
  HeaderFacts facts;
  facts.run_id = run_id_;
  facts.argv = options_.argv;
  facts.config = config_;
  facts.info = &info_;
  facts.system = system_ ? &*system_ : nullptr;
  if (!faults_.empty()) facts.fault = faults_.text();
  facts.simulated = simulated_json();
  const record::RunHeader header = make_run_header(facts, sets_->backends());
  if (results_.writer && !results_.has_header) results_.writer->write(record::to_json(header));
  console_.begin(header);
}

// ---- per case --------------------------------------------------------------------------------

// The case's communicator and its size (collective over all ranks).
CaseRun SweepRun::start_case(std::size_t position) {
  CaseRun cr;
  cr.index = schedule_.order[position];
  cr.position = position;
  cr.c = &sweep_.cases[cr.index];
  cr.coll = &coll::find_collective(cr.c->collective);
  bind_comm(cr);
  return cr;
}

// The communicator the case runs on now (again before every repeat: each pass creates its sets).
void SweepRun::bind_comm(CaseRun& cr) {
  const std::size_t i = cr.index;
  const plan::Case& c = *cr.c;
  if (watchdog_) {
    watchdog_->set_case_label(fmt::format("{} {} B {}", c.collective, c.bytes, to_string(c.dtype)));
    watchdog_->at(static_cast<int>(i), -1, Phase::host, case_timeout(c));
  }
  cr.bs = &sets_->acquire(c);
  // Families that run on the levels at once (ep-dp-concurrent) get them whatever the algorithm.
  cr.levels = cr.coll->uses_levels() && c.scope == Scope::global;
  cr.comm = c.algo == "hierarchical" || cr.levels ? cr.bs->hierarchical.get()
            : c.scope == Scope::global            ? cr.bs->world.get()
                                                  : cr.bs->domain.get();
  // The record describes rank 0's communicator (domain 0 under scope=domain).
  cr.comm_size = cr.comm->size();
  MPI_Bcast(&cr.comm_size, 1, MPI_INT, 0, control_.comm());
  cr.ctx0 = case_context(c, 0, cr.comm_size, &placement_);
}

// Waivers first: a case that cannot run here may not have a shape either.
void SweepRun::waive_step(CaseRun& cr) {
  const plan::Case& c = *cr.c;
  const coll::Collective& coll = *cr.coll;
  std::optional<std::string> waiver = algo_waiver(c, placement_);
  if (!waiver && c.in_place && !coll.supports_in_place()) {
    waiver = fmt::format("{} has no in-place form", c.collective);
  }
  if (!waiver && coll.uses_levels() && c.scope != Scope::global) {
    waiver = fmt::format("{} spans domains (all-to-all inside each, all-reduce across them): use --scope global",
                         c.collective);
  }
  if (!waiver) waiver = coll.waiver(cr.ctx0);
  if (!waiver && cr.levels) waiver = cr.comm->group_waiver();
  if (!waiver) waiver = capability_waiver(cr);
  cr.waiver = std::move(waiver);
}

// The machine's capability on the communicator the case is bound to (in-switch algorithms: the
// NCCL backend probes that communicator here, collectively over all ranks, so that no launch has
// to; every rank gets the same verdict).
std::optional<std::string> SweepRun::capability_waiver(CaseRun& cr) {
  const plan::Case& c = *cr.c;
  return backend::backend_policy(c.backend).capability_waiver(*cr.bs->backend, *cr.comm, c.collective, c.dtype,
                                                              c.redop);
}

// The record before the case runs: identity, shape, case key, workload, progress, fault.
void SweepRun::make_record(CaseRun& cr) {
  const plan::Case& c = *cr.c;
  const coll::Collective& coll = *cr.coll;
  if (!cr.waiver) {  // agreed on every rank: the shared inputs are a collective step
    ControlRowGather gather(control_);
    coll.share_inputs(c.bytes, cr.ctx0, gather);
  }
  cr.shape0 = cr.waiver ? coll::Shape{} : coll.shape_for(c.bytes, cr.ctx0);
  cr.rec = skeleton(c, coll, cr.shape0, placement_, cr.comm_size, run_id_);
  record::CaseRecord& rec = cr.rec;
  if (cr.waiver) {  // no shape: the requested size, so every waived size keeps a case key of its own
    rec.bytes = c.bytes;
    rec.case_key = record::make_case_key(rec);
  }
  rec.simulated = backend::sim::active();
  std::string size_label = coll.size_label(cr.shape0, cr.ctx0);
  if (!c.overlap.empty()) {  // overlap cases stay distinct from the plain case of the same size
    size_label += fmt::format("{}overlap={}", size_label.empty() ? "" : ";", c.overlap);
    if (c.overlap_chunks > 0) size_label += fmt::format(";chunks={}", c.overlap_chunks);
  }
  if (!size_label.empty()) rec.case_key = record::make_case_key(rec, size_label);
  rec.workload = cr.waiver ? nlohmann::json(nullptr) : coll.workload_record(cr.shape0);
  cr.progress = polls_for_overlap(c) ? std::string("yield") : progress_name_;
  rec.extra["progress"] = cr.progress;
  if (!faults_.empty() && faults_.affects_case(static_cast<int>(cr.index))) rec.fault = faults_.text();
}

void SweepRun::show_progress(const CaseRun& cr, int pass) const {
  if (!root_ || !tty_ || !options_.show_progress) return;
  const plan::Case& c = *cr.c;
  const std::string rep = pass < 0 ? std::string() : fmt::format(" repeat {}/{}", pass + 1, options_.repeats);
  std::fprintf(stderr, "\r[%zu/%zu]%s %s %s %s ...", cr.position + 1, sweep_.cases.size(), rep.c_str(),
               c.collective.c_str(), format_bytes(c.bytes).c_str(), to_string(c.dtype).data());
  std::fflush(stderr);
}

void SweepRun::waive(record::CaseRecord& rec, const std::string& reason) {
  rec.status = "waived";
  rec.reason = reason;
  rec.stop_reason = "waived";
  ++summary_.cases_waived;
}

void SweepRun::measure_step(CaseRun& cr) {
  const auto m = measure_once(cr);
  if (m && root_) annotate(cr, *m);
}

// Measures the case on every rank; nullopt when it is waived (the record says why).
std::optional<Measurement> SweepRun::measure_once(CaseRun& cr) {
  if (cr.waiver) {
    waive(cr.rec, *cr.waiver);
    return std::nullopt;
  }
  MeasureInput in;
  in.spec = cr.c;
  in.collective = cr.coll;
  in.backend = cr.bs->backend;
  in.comm = cr.comm;
  in.control = &control_;
  in.progress = progress_;
  in.faults = &faults_;
  in.case_index = static_cast<int>(cr.index);
  in.world_rank = info_.rank;
  in.max_samples_kept = options_.max_samples_kept;
  in.watchdog = watchdog_;
  in.timeout_s = case_timeout(*cr.c);
  in.placement = &placement_;
  in.verify = options_.verify;
  Measurement m = measure(in);
  if (m.waived) {  // the library refused the case on every rank (backend::Unsupported)
    waive(cr.rec, *m.waived);
    return std::nullopt;
  }
  const std::string used = cr.comm->algo_used();
  if (!used.empty() && !cr.levels) cr.rec.algo_used = used;  // levels: the library's own ops, not "hierarchical"
  return m;
}

// Rank 0: the measurement into the record (of repeats: merged, p50 the median of their medians),
// the backend's notes, and the model beside it.
void SweepRun::annotate(CaseRun& cr, const Measurement& m, const std::vector<RepeatResult>* repeats) {
  const plan::Case& c = *cr.c;
  record::CaseRecord& rec = cr.rec;
  fill_measurement(rec, m, *cr.coll, cr.comm_size, options_.max_samples_kept);
  if (repeats != nullptr) apply_repeats(rec, *repeats, cr.coll->busbw_factor(cr.comm_size));
  if (m.overlap) {
    rec.overlap = overlap_record(*m.overlap, cr.progress);
    if (const auto bad = rec.overlap["compute_wrong"].get<std::uint64_t>(); bad > 0 && rec.status != "failed") {
      rec.status = "failed";
      rec.reason = fmt::format("the compute load beside the collective computed {} wrong element(s)", bad);
    }
  }
  const auto notes = backend::backend_policy(c.backend).record_notes(c.algo, c.collective, c.dtype,
                                                                     static_cast<double>(rec.bytes), cr.comm_size);
  for (const auto& note : notes) {  // not a structured binding: clang < 16 cannot capture one
    std::visit([&](const auto& v) { rec.extra[note.first] = v; }, note.second);
  }
  if (rec.workload.is_object()) {
    const auto cx = m.side_us.find("counts_exchange");
    if (cx != m.side_us.end()) rec.workload["counts_exchange_us"] = cx->second;
  }
  const model::SystemProfile* system = system_ ? &*system_ : nullptr;
  if (const auto parts = cr.coll->concurrent_parts(cr.shape0, cr.ctx0); !parts.empty()) {
    annotate_concurrent(rec, parts, m.side_us, c, system);
  } else if (const auto traffic = cr.coll->traffic_summary(cr.shape0, cr.ctx0.placement)) {
    if (system) annotate_with_traffic_model(rec, *traffic, cr.ctx0.placement, *system);
  } else if (system) {
    annotate_with_model(rec, c, placement_, *system);
  }
}

// Rank 0: the record into the results file and onto the console (--format).
void SweepRun::emit(record::CaseRecord rec) {
  if (rec.status == "failed") ++summary_.cases_failed;
  if (results_.writer) results_.writer->write(record::to_json(rec));
  if (tty_ && options_.show_progress) std::fputs("\r\033[K", stderr);
  console_.add(rec);  // a full disk under `> file` ends the run (exit 3), the table not lost
  summary_.records.push_back(std::move(rec));
}

// Whether the case is measured (rank 0 decides, every rank follows): not when it is already in the
// resumed file, or repeats a case key of this run (`-d float32,float32`, two sweep entries, sizes
// that round to one): one record per case key, or gate would refuse the file.
bool SweepRun::claim(const CaseRun& cr) {
  const bool done = root_ && results_.done_keys.count(cr.rec.case_key) > 0;
  const bool repeat = root_ && !options_.measure_repeats && emitted_keys_.count(cr.rec.case_key) > 0;
  if (control_.broadcast_flag(done || repeat)) {
    if (repeat) {
      ++repeats_;
    } else {
      ++summary_.cases_skipped;
    }
    return false;
  }
  if (root_) emitted_keys_.insert(cr.rec.case_key);
  return true;
}

void SweepRun::run_case(std::size_t position) {
  CaseRun cr = start_case(position);
  waive_step(cr);
  make_record(cr);
  if (!claim(cr)) return;
  show_progress(cr);
  measure_step(cr);
  ++summary_.cases_run;
  if (root_) emit(std::move(cr.rec));
}

// The set of the case at `position` after its last case (collective: every rank follows the same
// schedule). The watchdog covers ncclCommFinalize, which waits for the peers.
void SweepRun::release_after(std::size_t position) {
  if (!plan::releases_after(schedule_, position)) return;
  const std::size_t i = schedule_.order[position];
  if (watchdog_) watchdog_->at(static_cast<int>(i), -1, Phase::host, case_timeout(sweep_.cases[i]));
  sets_->release(sweep_.cases[i]);
}

// --repeats k: k passes over the cases in the run order, each creating its sets afresh (every
// set is released after its last case of the pass); a case's record is written after its last
// repeat, so the file keeps the run order.
void SweepRun::run_repeated() {
  std::vector<PendingCase> pending(sweep_.cases.size());
  for (int pass = 0; pass < options_.repeats; ++pass) {
    for (std::size_t pos = 0; pos < pending.size(); ++pos) {
      repeat_case(pending[pos], pos, pass);
      release_after(pos);
    }
  }
}

void SweepRun::repeat_case(PendingCase& p, std::size_t position, int pass) {
  const int k = options_.repeats;
  if (pass == 0) {
    p.cr = start_case(position);
    waive_step(p.cr);
    make_record(p.cr);
    p.active = claim(p.cr);
  } else if (p.active && !p.waived) {
    bind_comm(p.cr);
    // A later repeat runs on fresh communicators: their capability is asked again, collectively,
    // before the first launch would probe it on its own (cb-multimem's device communicator).
    p.cr.waiver = capability_waiver(p.cr);
  }
  if (!p.active) return;
  if (!p.waived) {
    show_progress(p.cr, pass);
    auto m = measure_once(p.cr);
    p.waived = !m.has_value();
    if (m && root_)
      p.repeats.push_back(keep_repeat(std::move(*m), options_.max_samples_kept / static_cast<std::size_t>(k)));
  }
  if (pass + 1 < k) return;
  ++summary_.cases_run;
  if (!root_) return;
  if (!p.waived) annotate(p.cr, merge_repeats(p.repeats), &p.repeats);
  p.repeats.clear();
  emit(std::move(p.cr.rec));
}

void SweepRun::finish() {
  if (root_ && repeats_ > 0) {
    std::fprintf(stderr,
                 "collbench: note: %d case(s) repeat an earlier case of this run (same case key: collective, "
                 "dtype, reduction, size, ...) and were measured once\n",
                 repeats_);
  }
  if (root_) console_.end(summary_.records);
  int failed = summary_.cases_failed;
  MPI_Bcast(&failed, 1, MPI_INT, 0, control_.comm());
  if (watchdog_) watchdog_->at(-1, -1, Phase::idle, 0.0);
  summary_.cases_failed = failed;
  record_communicators();
}

// The communicators the run created and held at once (every set is released by now): into the
// summary, and into the results file's run header, which was written before they were known
// (JsonlWriter::update_first_line; docs/results-format.md).
void SweepRun::record_communicators() {
  const backend::CommCounts n = sets_->counts();
  summary_.communicators = n;
  // A --resume only appends: the header it found keeps what its own run wrote.
  if (!root_ || !results_.writer || results_.has_header) return;
  results_.writer->update_first_line([&n](nlohmann::json& header) {
    if (header.value("kind", "") == "run_header")
      header["communicators"] = record::to_json(record::CommunicatorCounts{n.created, n.max_live});
  });
}

RunSummary SweepRun::run() {
  tty_ = isatty(fileno(stderr)) != 0;
  if (options_.repeats > 1) {
    run_repeated();
  } else {
    for (std::size_t pos = 0; pos < sweep_.cases.size(); ++pos) {
      run_case(pos);
      release_after(pos);
    }
  }
  finish();
  return std::move(summary_);
}

}  // namespace

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {}

RunSummary Runner::run(const plan::Sweep& sweep) {
  SweepRun run(options_, sweep);
  return run.run();
}

}  // namespace collbench::run
