// nccl-tests logs -> collbench records.
#include "collbench/record/nccltests_convert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"

namespace collbench::record {

namespace {

// The collectives collbench records (results schema) that nccl-tests also has
// (core/collective_facts.hpp); nccl-tests' gather, scatter and hypercube have no collbench
// counterpart.
bool recordable(const std::string& collective) {
  const CollectiveFacts* f = find_collective_facts(collective);
  return f != nullptr && f->nccl_tests;
}

constexpr const char* kPlacementUnknown =
    "placement unknown: nccl-tests logs do not say which ranks share a scale-up domain, so the record holds one "
    "domain of all ranks";

std::optional<int> header_int(const NcclTestsLog& log, const char* key) {
  const auto it = log.header.find(key);
  if (it == log.header.end()) return std::nullopt;
  try {
    std::size_t used = 0;
    const long v = std::stol(it->second, &used);
    if (used == 0 || v < 0) return std::nullopt;
    return static_cast<int>(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string where(const NcclTestsLog& log, const NcclTestsRow& row) {
  return row.line > 0 ? fmt::format("{}:{}", log.source_path, row.line)
                      : fmt::format("{} (results[{}])", log.source_path, row.index);
}

// Send and receive bytes per rank under the nccl-tests size convention (docs/hardware-context.md section 3).
void set_rank_bytes(CaseRecord& r, std::size_t elem_bytes) {
  const std::uint64_t chunk = r.count * elem_bytes;
  r.bytes_per_rank_send = r.bytes;
  r.bytes_per_rank_recv = r.bytes;
  switch (collective_id(r.collective).value_or(CollectiveId::allreduce)) {
    case CollectiveId::reducescatter:
      r.bytes_per_rank_recv = chunk;
      break;
    case CollectiveId::allgather:
      r.bytes_per_rank_send = chunk;
      break;
    case CollectiveId::alltoallv:
      r.bytes_max_rank = r.bytes;
      break;
    default:
      break;
  }
}

struct Tally {
  int count = 0;
  std::string first;
  void add(const std::string& at) {
    if (count++ == 0) first = at;
  }
};

}  // namespace

std::string nccl_tests_placement_note(const NcclTestsConvertOptions& opt) {
  if (!opt.ranks_per_domain) return kPlacementUnknown;
  return fmt::format("placement given at import ({}): domains of {} ranks in rank order, the last one partial",
                     opt.placement_from.empty() ? "--ranks-per-domain" : opt.placement_from, *opt.ranks_per_domain);
}

bool placement_unknown(const CaseRecord& r) {
  const auto it = r.extra.find("placement_note");
  return it != r.extra.end() && it->is_string() && it->get<std::string>() == kPlacementUnknown;
}

std::optional<std::string> collbench_dtype_from_nccl_tests(const std::string& type) {
  static const std::map<std::string, std::string> names{
      {"float", "float32"},         {"float32", "float32"},   {"half", "float16"},
      {"float16", "float16"},       {"bfloat16", "bfloat16"}, {"double", "float64"},
      {"float64", "float64"},       {"int32", "int32"},       {"int", "int32"},
      {"int64", "int64"},           {"f8e4m3", "float8e4m3"}, {"fp8_e4m3", "float8e4m3"},
      {"float8e4m3", "float8e4m3"}, {"f8e5m2", "float8e5m2"}, {"fp8_e5m2", "float8e5m2"},
      {"float8e5m2", "float8e5m2"}};
  const auto it = names.find(type);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> collbench_redop_from_nccl_tests(const std::string& redop, bool& known) {
  known = true;
  if (redop == "sum" || redop == "prod" || redop == "min" || redop == "max") return redop;
  if (redop.empty() || redop == "none") return std::nullopt;
  known = false;  // avg, premulsum, mulsum: no collbench reduction
  return std::nullopt;
}

// ---- convert_nccl_tests_log's steps
namespace {

// What every case of one log shares: the log, the options and the values resolved from them.
struct LogContext {
  const NcclTestsLog& log;
  const NcclTestsConvertOptions& opt;
  std::string collective;
  int num_ranks = 0;
  double factor = 1.0;  // busbw / algbw of the collective at num_ranks
  std::optional<int> iters, warmup;
  int graph = 0;
};

// What the rows left out or found inconsistent, reported once per log after the rows.
struct RowTallies {
  std::map<std::string, Tally> skipped_types, skipped_ops;
  Tally algbw_mismatch, busbw_mismatch, recomputed;
};

// One measurement's time, algbw and busbw: printed, or derived from the others (named in `derived`).
struct Measured {
  double time = 0.0, algbw = 0.0, busbw = 0.0;
  std::vector<std::string> derived;
};

// "PATH:FIRST-LAST" of the log's lines, or the path alone (JSON).
std::string log_span(const NcclTestsLog& log) {
  return log.first_line > 0 ? fmt::format("{}:{}-{}", log.source_path, log.first_line, log.last_line) : log.source_path;
}

// The parser's warnings and the errors nccl-tests printed, each naming the log.
void add_log_warnings(const NcclTestsLog& log, std::vector<std::string>& warnings) {
  for (const auto& w : log.warnings) warnings.push_back(fmt::format("{}: {}", log.source_path, w));
  for (const auto& e : log.errors) warnings.push_back(fmt::format("{}: nccl-tests reported: {}", log.source_path, e));
}

// The log's collective, else --collective; InputError when neither gives one.
std::string log_collective(const NcclTestsLog& log, const NcclTestsConvertOptions& opt, const std::string& span) {
  std::string collective = !log.collective.empty() ? log.collective : opt.collective.value_or("");
  if (collective.empty()) {
    throw InputError(
        fmt::format("{}: the collective of this log could not be inferred (no 'Collective test "
                    "starting' line, program or file name); give it with --collective NAME",
                    span));
  }
  return collective;
}

// The log's rank count, else --num-ranks; InputError when neither gives one or they disagree.
int log_num_ranks(const NcclTestsLog& log, const NcclTestsConvertOptions& opt, const std::string& span) {
  std::optional<int> num_ranks = log.num_ranks ? log.num_ranks : opt.num_ranks;
  if (!num_ranks || *num_ranks < 1) {
    throw InputError(fmt::format("{}: the rank count of this log is unknown{}; give it with --num-ranks N", span,
                                 log.num_ranks_at_least ? fmt::format(" (at least {})", *log.num_ranks_at_least) : ""));
  }
  if (log.num_ranks && opt.num_ranks && *log.num_ranks != *opt.num_ranks) {
    throw InputError(fmt::format("{}: --num-ranks {} contradicts the log's {} rank(s) (from the {})", span,
                                 *opt.num_ranks, *log.num_ranks, log.num_ranks_source));
  }
  return *num_ranks;
}

// JSON value of an optional: the value, or null.
template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// What the run header's config.logs says about this log (its "cases" is set by the caller).
nlohmann::json source_json(const NcclTestsLog& log, const std::string& collective, int n) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : log.header) params[k] = v;
  return {
      {"path", log.source_path},
      {"format", log.format},
      {"program", log.program.empty() ? nlohmann::json(nullptr) : nlohmann::json(log.program)},
      {"collective", collective},
      {"nccl_tests_version", or_null(log.nccl_tests_version)},
      {"nccl_version", or_null(log.nccl_version)},
      {"num_ranks", n},
      {"num_ranks_source", log.num_ranks ? log.num_ranks_source : std::string("--num-ranks")},
      {"parameters", params},
      {"cpu_time", log.cpu_time},
      {"lines", log.first_line > 0 ? nlohmann::json::array({log.first_line, log.last_line}) : nlohmann::json(nullptr)},
      {"rows", log.rows.size()},
      {"avg_busbw", or_null(log.avg_busbw)}};
}

// Hosts per rank from the log's device list.
std::vector<HostInfo> hosts_from_devices(const std::vector<NcclTestsDevice>& devices) {
  std::vector<HostInfo> hosts;
  for (const auto& d : devices) {
    HostInfo h;
    h.rank = d.rank;
    h.host = d.host;
    h.pid = d.pid.value_or(0);
    if (!d.name.empty()) h.gpu_name = d.name;
    if (!d.bus_id.empty()) h.pci_bus_id = d.bus_id;
    hosts.push_back(std::move(h));
  }
  return hosts;
}

// The warning for a log whose collective collbench does not record (all its rows skipped).
std::string skipped_log_warning(const NcclTestsLog& log, const std::string& span, const std::string& collective) {
  return fmt::format(
      "{}: skipped {} row(s) of '{}': collbench records no such collective "
      "(accepted: allreduce, allgather, reducescatter, alltoall, alltoallv, "
      "broadcast, reduce, sendrecv)",
      span, log.rows.size(), collective);
}

// Time, algbw and busbw of a measurement, a missing one derived from the others (nullopt: no time, no algbw).
std::optional<Measured> measurement(const NcclTestsHalf& h, double bytes, double factor) {
  Measured m;
  std::optional<double> time = h.time_us;
  if (!time && h.algbw_gbps && *h.algbw_gbps > 0.0) {
    time = bytes / (*h.algbw_gbps * kBytesPerGB) * 1e6;
    m.derived.push_back("time_us");
  }
  if (!time) return std::nullopt;
  m.time = *time;
  m.algbw = h.algbw_gbps ? *h.algbw_gbps : gbps(bytes, m.time);
  if (!h.algbw_gbps) m.derived.push_back("algbw_gbps");
  m.busbw = h.busbw_gbps ? *h.busbw_gbps : m.algbw * factor;
  if (!h.busbw_gbps) m.derived.push_back("busbw_gbps");
  return m;
}

// Whether the printed algbw and busbw are size / time (x factor) within rounding; tallies those that are not.
bool consistent_with_time(const NcclTestsHalf& h, double bytes, double time, double factor, const std::string& at,
                          RowTallies& tallies) {
  if (!(time > 0.0 && h.time_us)) return true;
  bool consistent = true;
  const double algbw_from_time = gbps(bytes, time);
  const double rel_time = h.time_tolerance_us / time;
  if (h.algbw_gbps &&
      std::abs(algbw_from_time - *h.algbw_gbps) > h.algbw_tolerance_gbps + algbw_from_time * rel_time + 1e-9) {
    tallies.algbw_mismatch.add(at);
    consistent = false;
  }
  const double busbw_from_time = algbw_from_time * factor;
  if (h.busbw_gbps &&
      std::abs(busbw_from_time - *h.busbw_gbps) > h.busbw_tolerance_gbps + busbw_from_time * rel_time + 1e-9) {
    tallies.busbw_mismatch.add(at);
    consistent = false;
  }
  return consistent;
}

// The case's identity and run parameters: what nccl-tests ran, on how many ranks, how often.
CaseRecord case_identity(const LogContext& ctx, const NcclTestsRow& row, bool in_place, const std::string& dtype,
                         const std::optional<std::string>& redop, std::size_t elem) {
  CaseRecord r;
  r.run_id = ctx.opt.run_id;
  r.collective = ctx.collective;
  r.redop = redop;
  r.dtype = dtype;
  r.backend = "nccl";
  r.algo_requested = "auto";
  r.scope = "global";
  r.in_place = in_place;
  r.timing = "pipelined";  // nccl-tests launches `iters` operations back to back, then averages
  r.buffers = "plain";
  r.graph = ctx.graph;
  r.bytes = row.size_bytes;
  r.count = row.count;
  set_rank_bytes(r, elem);
  const int n = ctx.num_ranks;
  r.num_ranks = n;
  r.domain_sizes = ctx.opt.ranks_per_domain ? placement_from_ranks_per_domain(n, *ctx.opt.ranks_per_domain).domain_sizes
                                            : std::vector<int>{n};
  r.num_domains = static_cast<int>(r.domain_sizes.size());
  r.iterations = ctx.iters.value_or(0);
  r.warmup = ctx.warmup.value_or(0);
  return r;
}

// Sets `field` to a printed per-iteration value and strikes its name from `filled`.
void take_printed(double& field, const std::optional<double>& v, const char* name, std::vector<std::string>& filled) {
  if (!v) return;
  field = *v;
  filled.erase(std::remove(filled.begin(), filled.end(), std::string(name)), filled.end());
}

// nccl-tests -I / the JSON per-iteration object: keeps what it printed (statistics and samples).
void apply_per_iteration(const NcclTestsPerIteration& pi, CaseRecord& r, TimeStats& t,
                         std::vector<std::string>& filled) {
  take_printed(t.min, pi.min_us, "min", filled);
  take_printed(t.max, pi.max_us, "max", filled);
  take_printed(t.mean, pi.avg_us, "mean", filled);
  take_printed(t.p95, pi.p95_us, "p95", filled);
  take_printed(t.p99, pi.p99_us, "p99", filled);
  take_printed(t.stdev, pi.stdev_us, "stdev", filled);
  if (pi.cv_pct) take_printed(t.cv, std::optional<double>(*pi.cv_pct / 100.0), "cv", filled);
  if (pi.times_us.empty()) return;
  r.samples_us = pi.times_us;
  if (r.iterations > static_cast<int>(pi.times_us.size())) {
    r.samples_dropped = static_cast<std::uint64_t>(r.iterations) - pi.times_us.size();
  }
}

// Sets the time statistics (the printed average unless printed per iteration); returns those repeating it.
std::vector<std::string> set_time_stats(CaseRecord& r, const NcclTestsHalf& h, double time) {
  TimeStats t;
  t.p50 = t.p5 = t.p95 = t.p99 = t.min = t.max = t.mean = t.ci95_low = t.ci95_high = time;
  t.stdev = t.cv = 0.0;
  std::vector<std::string> filled{"p5", "p95", "p99", "min", "max", "mean", "stdev", "cv", "ci95_low", "ci95_high"};
  r.samples_us = {time};
  if (h.per_iteration) apply_per_iteration(*h.per_iteration, r, t, filled);
  r.time_us = t;
  return filled;
}

// The case's result: bandwidths, validation and the failure nccl-tests' #wrong reports.
void set_result(CaseRecord& r, const NcclTestsHalf& h, const Measured& m) {
  r.stop_reason = "max_iters";  // nccl-tests runs a fixed number of iterations
  r.algbw_gbps = std::max(0.0, m.algbw);
  r.busbw_gbps = std::max(0.0, m.busbw);
  r.checked = h.wrong.has_value();
  r.wrong_total = h.wrong.value_or(0);
  if (r.wrong_total > 0) {
    r.status = "failed";
    r.reason = fmt::format("nccl-tests reported {} wrong element(s) (ranks not given in the log)", r.wrong_total);
  }
}

// The record's extra.nccl_tests object: what the log printed and how the record was made from it.
nlohmann::json nccl_tests_details(const NcclTestsLog& log, const NcclTestsRow& row, const NcclTestsHalf& h,
                                  const std::vector<std::string>& filled, const Measured& m, bool consistent) {
  nlohmann::json details = {{"time_is", log.cpu_time ? "CPU time averaged over the iterations (nccl-tests -C)"
                                                     : "GPU time averaged over the iterations, as printed"},
                            {"type", row.type},
                            {"redop", row.redop},
                            {"root", row.root},
                            {"time_fields_repeating_the_printed_time", filled},
                            {"derived", m.derived},
                            {"consistent", consistent}};
  if (h.max_error) details["max_error"] = *h.max_error;
  if (!h.wrong && !h.max_error) details["wrong"] = "N/A (validation off or not printed)";
  return details;
}

// The record's extra: where it came from (log, line, row) and its details.
nlohmann::json case_extra(const LogContext& ctx, const NcclTestsRow& row, nlohmann::json details) {
  return {{"source", "nccl-tests"},
          {"source_log", ctx.log.source_path},
          {"source_line", row.line > 0 ? nlohmann::json(row.line) : nlohmann::json(nullptr)},
          {"source_row", row.index},
          {"nccl_tests_version", or_null(ctx.log.nccl_tests_version)},
          {"placement_note", nccl_tests_placement_note(ctx.opt)},
          {"nccl_tests", std::move(details)}};
}

// The dtype and redop of one row in collbench spelling, and the element size.
struct RowTypes {
  std::string dtype;
  std::optional<std::string> redop;
  std::size_t elem = 0;
};

// One measurement (in-place or out-of-place half of a row) as a record, or a warning when it has no time.
void convert_half(const LogContext& ctx, const NcclTestsRow& row, const RowTypes& types, bool in_place,
                  NcclTestsConverted& out, RowTallies& tallies) {
  const NcclTestsHalf& h = in_place ? row.in_place : row.out_of_place;
  if (!h.present()) return;
  const double bytes = static_cast<double>(row.size_bytes);
  const std::string at = where(ctx.log, row);
  const std::optional<Measured> m = measurement(h, bytes, ctx.factor);
  if (!m) {
    out.warnings.push_back(fmt::format("{}: {} measurement of {} B has no time: left out", at,
                                       in_place ? "in-place" : "out-of-place", row.size_bytes));
    return;
  }
  const bool consistent = consistent_with_time(h, bytes, m->time, ctx.factor, at, tallies);
  if (!m->derived.empty()) tallies.recomputed.add(at);

  CaseRecord r = case_identity(ctx, row, in_place, types.dtype, types.redop, types.elem);
  const std::vector<std::string> filled = set_time_stats(r, h, m->time);
  set_result(r, h, *m);
  r.extra = case_extra(ctx, row, nccl_tests_details(ctx.log, row, h, filled, *m, consistent));
  if (rooted_collective(r.collective) && row.root >= 0) r.root = static_cast<int>(row.root);
  r.case_key = make_case_key(r);
  out.cases.push_back(std::move(r));
}

// One table row: up to two records, or a tally when collbench has no such dtype or reduction.
void convert_row(const LogContext& ctx, const NcclTestsRow& row, NcclTestsConverted& out, RowTallies& tallies) {
  const auto dtype = collbench_dtype_from_nccl_tests(row.type);
  if (!dtype) {
    tallies.skipped_types[row.type].add(where(ctx.log, row));
    return;
  }
  bool op_known = true;
  const auto redop = collbench_redop_from_nccl_tests(row.redop, op_known);
  if (!op_known) {
    tallies.skipped_ops[row.redop].add(where(ctx.log, row));
    return;
  }
  const RowTypes types{*dtype, redop, dtype_size(parse_dtype(*dtype))};
  for (const bool in_place : {false, true}) convert_half(ctx, row, types, in_place, out, tallies);
}

// One warning per kind of row left out (dtype, reduction), each naming its count and first place.
void add_skip_warnings(const NcclTestsLog& log, const RowTallies& tallies, std::vector<std::string>& warnings) {
  for (const auto& [type, t] : tallies.skipped_types) {
    warnings.push_back(fmt::format("{}: skipped {} row(s) of type '{}' (first at {}): collbench has no such dtype",
                                   log.source_path, t.count, type, t.first));
  }
  for (const auto& [op, t] : tallies.skipped_ops) {
    warnings.push_back(
        fmt::format("{}: skipped {} row(s) with reduction '{}' (first at {}): collbench has no such "
                    "reduction (sum, prod, min, max)",
                    log.source_path, t.count, op, t.first));
  }
}

// One warning per kind of inconsistent or recomputed measurement, each naming its count and first place.
void add_check_warnings(const NcclTestsLog& log, const RowTallies& tallies, double factor,
                        std::vector<std::string>& warnings) {
  if (tallies.algbw_mismatch.count > 0) {
    warnings.push_back(
        fmt::format("{}: {} measurement(s) print an algbw that is not size / time within rounding "
                    "(first at {}); the printed values are kept",
                    log.source_path, tallies.algbw_mismatch.count, tallies.algbw_mismatch.first));
  }
  if (tallies.busbw_mismatch.count > 0) {
    warnings.push_back(
        fmt::format("{}: {} measurement(s) print a busbw that is not size / time x {:g} within "
                    "rounding (first at {}); the printed values are kept",
                    log.source_path, tallies.busbw_mismatch.count, factor, tallies.busbw_mismatch.first));
  }
  if (tallies.recomputed.count > 0) {
    warnings.push_back(
        fmt::format("{}: {} measurement(s) lack a printed time, algbw or busbw (first at {}); "
                    "recomputed from the others (listed in nccl_tests.derived)",
                    log.source_path, tallies.recomputed.count, tallies.recomputed.first));
  }
}

}  // namespace

NcclTestsConverted convert_nccl_tests_log(const NcclTestsLog& log, const NcclTestsConvertOptions& opt) {
  NcclTestsConverted out;
  const std::string span = log_span(log);
  add_log_warnings(log, out.warnings);
  const std::string collective = log_collective(log, opt, span);
  const int n = log_num_ranks(log, opt, span);
  out.source = source_json(log, collective, n);
  out.hosts = hosts_from_devices(log.devices);
  if (!recordable(collective)) {
    out.skipped = true;
    out.warnings.push_back(skipped_log_warning(log, span, collective));
    out.source["cases"] = 0;
    return out;
  }
  const LogContext ctx{log,
                       opt,
                       collective,
                       n,
                       nccl_tests_busbw_factor(collective, n),
                       header_int(log, "iters"),
                       header_int(log, "warmup iters"),
                       header_int(log, "graph").value_or(0)};
  if (!ctx.iters)
    out.warnings.push_back(fmt::format("{}: no 'iters' in the log's header: iterations recorded as 0", span));

  RowTallies tallies;
  for (const auto& row : log.rows) convert_row(ctx, row, out, tallies);
  add_skip_warnings(log, tallies, out.warnings);
  add_check_warnings(log, tallies, ctx.factor, out.warnings);
  out.source["cases"] = out.cases.size();
  return out;
}

namespace {

// The run header fields every import takes from the options.
void fill_header_basics(RunHeader& h, const NcclTestsConvertOptions& opt) {
  h.run_id = opt.run_id;
  h.started_at = opt.started_at;
  h.tool_version = opt.tool_version;
  h.git_sha = opt.git_sha;
  h.backends_built = opt.backends_built;
  h.argv = opt.argv;
  h.launcher = "singleton";  // the schema's launchers; the real one is unknown (config.launcher_note)
  h.system = nullptr;
}

// What the logs contribute to the run header besides their records.
struct LogsSummary {
  nlohmann::json sources = nlohmann::json::array();
  std::vector<std::vector<HostInfo>> host_lists;
  std::set<std::string> nccl_versions;
};

// Keeps the first record per case key; a repeated row (the same log twice, a size printed twice)
// is dropped, and the warning names both places (gate refuses a file with repeated keys).
void add_cases(const NcclTestsLog& log, NcclTestsConverted& conv, std::map<std::string, std::string>& first_key_at,
               NcclTestsImport& imp) {
  for (auto& r : conv.cases) {
    const std::string at = r.extra.value("source_line", nlohmann::json(nullptr)).is_null()
                               ? log.source_path
                               : fmt::format("{}:{}", log.source_path, r.extra["source_line"].get<int>());
    const auto [it, inserted] = first_key_at.emplace(r.case_key, at);
    if (inserted) {
      imp.cases.push_back(std::move(r));
      continue;
    }
    ++imp.duplicates_dropped;
    imp.warnings.push_back(fmt::format(
        "{}: dropped: the same case as {} ({}); a results file holds one record per case key, the first is kept", at,
        it->second, r.case_key));
  }
}

// Same ranks on the same hosts.
bool same_hosts(const std::vector<HostInfo>& a, const std::vector<HostInfo>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].rank != b[i].rank || a[i].host != b[i].host) return false;
  }
  return true;
}

// Hosts per rank belong to one run: kept when every log that lists devices lists the same ones
// (e.g. one log, or several tests run on one allocation); otherwise the returned note says why not.
std::string set_hosts(RunHeader& h, const std::vector<std::vector<HostInfo>>& host_lists) {
  if (host_lists.empty()) return "";
  const bool all_same = std::all_of(host_lists.begin(), host_lists.end(),
                                    [&](const auto& l) { return same_hosts(l, host_lists.front()); });
  if (!all_same) return "the logs list different devices; hosts per rank are in each log, not in this header";
  h.hosts = host_lists.front();
  return "";
}

// The header's config: the sources, notes, and each log's environment when there are several.
nlohmann::json import_config(const std::vector<NcclTestsLog>& logs, const NcclTestsConvertOptions& opt,
                             const nlohmann::json& sources, const std::string& hosts_note) {
  nlohmann::json config = {{"source", "nccl-tests"},
                           {"launcher_note", "imported: the launcher of the original run is unknown"},
                           {"placement_note", nccl_tests_placement_note(opt)},
                           {"logs", sources}};
  if (!hosts_note.empty()) config["hosts_note"] = hosts_note;
  if (logs.size() > 1) {
    nlohmann::json envs = nlohmann::json::object();
    for (const auto& log : logs) {
      if (!log.env.empty()) envs[log.source_path] = log.env;
    }
    if (!envs.empty()) config["env_per_log"] = envs;
  }
  return config;
}

}  // namespace

NcclTestsImport import_nccl_tests(const std::vector<NcclTestsLog>& logs, const NcclTestsConvertOptions& opt) {
  NcclTestsImport imp;
  RunHeader& h = imp.header;
  fill_header_basics(h, opt);
  LogsSummary sum;
  std::map<std::string, std::string> first_key_at;
  for (const auto& log : logs) {
    auto conv = convert_nccl_tests_log(log, opt);
    for (auto& w : conv.warnings) imp.warnings.push_back(std::move(w));
    add_cases(log, conv, first_key_at, imp);
    sum.sources.push_back(conv.source);
    if (!conv.hosts.empty()) sum.host_lists.push_back(conv.hosts);
    if (log.nccl_version) sum.nccl_versions.insert(*log.nccl_version);
  }
  const std::string hosts_note = set_hosts(h, sum.host_lists);
  if (sum.nccl_versions.size() == 1) h.nccl_version = *sum.nccl_versions.begin();
  if (logs.size() == 1) {
    for (const auto& [k, v] : logs.front().env) h.env[k] = v;
  }
  h.config = import_config(logs, opt, sum.sources, hosts_note);
  return imp;
}

}  // namespace collbench::record
