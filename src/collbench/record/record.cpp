// Record (de)serialisation. Every key of docs/interfaces.md section 3 is always written (null where
// not applicable), so readers and the JSON Schema can rely on it.
#include "collbench/record/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/join.hpp"

namespace collbench::record {

using nlohmann::json;

TimeStats TimeStats::from(const stats::Summary& s) {
  return TimeStats{s.p50, s.p5, s.p95, s.p99, s.min, s.max, s.mean, s.stdev, s.cv, s.ci95_low, s.ci95_high};
}

bool rooted_collective(std::string_view collective) {
  const CollectiveFacts* f = find_collective_facts(collective);
  return f != nullptr && f->rooted;
}

namespace {

std::string plain_case_key(const CaseRecord& r) {
  const std::string sizes = join_ints(r.domain_sizes);
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.collective, r.redop.value_or("-"), r.dtype, r.backend,
                     r.algo_requested, r.scope, r.in_place ? "inplace" : "outofplace", r.bytes, r.num_ranks, sizes);
}

}  // namespace

std::string make_case_key(const CaseRecord& r) {
  return make_case_key(r, "");
}

std::string make_case_key(const CaseRecord& r, std::string_view size_label) {
  std::string key = plain_case_key(r);
  std::string label = r.root && *r.root != 0 ? fmt::format("root={}", *r.root) : std::string();
  if (!size_label.empty()) {
    if (!label.empty()) label += ';';
    label += size_label;
  }
  if (label.empty()) return key;
  for (auto& ch : label) {
    if (ch == '|') ch = '/';
  }
  // After the 8th field (bytes): "...|7392000@deepseek-v3:T256:...|4|2,2".
  std::size_t pos = 0;
  for (int field = 0; field < 8; ++field) pos = key.find('|', pos) + 1;
  key.insert(pos - 1, "@" + label);
  return key;
}

namespace {

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json to_json(const TimeStats& t) {
  return {{"p50", t.p50},
          {"p5", t.p5},
          {"p95", t.p95},
          {"p99", t.p99},
          {"min", t.min},
          {"max", t.max},
          {"mean", t.mean},
          {"stdev", t.stdev},
          {"cv", t.cv},
          {"ci95_low", t.ci95_low},
          {"ci95_high", t.ci95_high}};
}

json to_json(const PerRank& p) {
  return {{"mean_us", p.mean_us}, {"max_us", p.max_us}, {"wait_us", p.wait_us}};
}

json to_json(const ModelFields& m) {
  return {{"system", m.system},
          {"bound_time_us", m.bound_time_us},
          {"bound_algbw_gbps", m.bound_algbw_gbps},
          {"bound_busbw_gbps", m.bound_busbw_gbps},
          {"expected_time_us", m.expected_time_us},
          {"expected_busbw_gbps", m.expected_busbw_gbps},
          {"efficiency", m.efficiency},
          {"wire_bytes_per_rank", m.wire_bytes_per_rank}};
}

// `wrong`: {total, by_rank: {"rank": count}}.
json wrong_json(const CaseRecord& r) {
  json by_rank = json::object();
  for (const auto& [rank, n] : r.wrong_by_rank) by_rank[std::to_string(rank)] = n;
  return {{"total", r.wrong_total}, {"by_rank", by_rank}};
}

json to_json(const Repeats& r) {
  return {{"k", r.k},
          {"p50_us", r.p50_us},
          {"ci95_low_us", r.ci95_low_us},
          {"ci95_high_us", r.ci95_high_us},
          {"iterations", r.iterations},
          {"samples_kept", r.samples_kept},
          {"stop_reason", r.stop_reason},
          {"spread_pct", r.spread_pct},
          {"sd_log", r.sd_log},
          {"between_low_us", r.between_low_us},
          {"between_high_us", r.between_high_us},
          {"between_confidence", r.between_confidence},
          {"within_ci_pct", r.within_ci_pct}};
}

// An integer of type T from a JSON value, range-checked: nlohmann's own conversion casts a
// float such as 1e300 to int, which is undefined behaviour.
template <class T>
T checked_integer(const json& v, const char* key) {
  if (v.is_number_float()) {  // 1e30, 2.0: JSON's floats, whatever their value (issue 37 item 7)
    throw InputError(
        fmt::format("record key '{}' must be an integer, got {} (a number written with a fraction or an "
                    "exponent)",
                    key, v.dump()));
  }
  if (!v.is_number_integer()) {
    throw InputError(fmt::format("record key '{}' must be an integer, got {}", key, v.type_name()));
  }
  const bool fits = v.is_number_unsigned()
                        ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                        : std::in_range<T>(v.get<std::int64_t>());
  if (!fits) throw InputError(fmt::format("record key '{}': {} is out of range", key, v.dump()));
  return v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
}

// Typed access with a message that names the field.
template <class T>
T get(const json& j, const char* key) {
  if (!j.contains(key)) throw InputError(fmt::format("record is missing key '{}'", key));
  const json& v = j.at(key);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return checked_integer<T>(v, key);
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    if (!v.is_array()) throw InputError(fmt::format("record key '{}' must be a list of integers", key));
    std::vector<int> out;
    for (const auto& x : v) out.push_back(checked_integer<int>(x, key));
    return out;
  } else {
    try {
      return v.get<T>();
    } catch (const json::exception& e) {
      throw InputError(fmt::format("record key '{}' has the wrong type: {}", key, e.what()));
    }
  }
}

template <class T>
std::optional<T> get_opt(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return get<T>(j, key);
}

// The `repeats` object (a repeated case); its lists must hold k values each.
Repeats repeats_from_json(const json& j) {
  Repeats r;
  r.k = get<int>(j, "k");
  r.p50_us = get<std::vector<double>>(j, "p50_us");
  r.ci95_low_us = get<std::vector<double>>(j, "ci95_low_us");
  r.ci95_high_us = get<std::vector<double>>(j, "ci95_high_us");
  r.iterations = get<std::vector<int>>(j, "iterations");
  r.samples_kept = get<std::vector<std::uint64_t>>(j, "samples_kept");
  r.stop_reason = get<std::vector<std::string>>(j, "stop_reason");
  r.spread_pct = get<double>(j, "spread_pct");
  r.sd_log = get<double>(j, "sd_log");
  r.between_low_us = get<double>(j, "between_low_us");
  r.between_high_us = get<double>(j, "between_high_us");
  r.between_confidence = get<double>(j, "between_confidence");
  r.within_ci_pct = get<double>(j, "within_ci_pct");
  const auto k = static_cast<std::size_t>(std::max(r.k, 0));
  if (r.k < 2 || r.p50_us.size() != k || r.ci95_low_us.size() != k || r.ci95_high_us.size() != k ||
      r.iterations.size() != k || r.samples_kept.size() != k || r.stop_reason.size() != k) {
    throw InputError(fmt::format("record key 'repeats': k = {} needs k >= 2 and k values in each list (p50_us has {})",
                                 r.k, r.p50_us.size()));
  }
  return r;
}

}  // namespace

json to_json(const RunHeader& h) {
  json hosts = json::array();
  for (const auto& x : h.hosts) {
    hosts.push_back({{"rank", x.rank},
                     {"host", x.host},
                     {"pid", x.pid},
                     {"gpu_name", opt(x.gpu_name)},
                     {"gpu_uuid", opt(x.gpu_uuid)},
                     {"pci_bus_id", opt(x.pci_bus_id)},
                     {"nic", opt(x.nic)}});
  }
  json out = {{"kind", "run_header"},
              {"schema", kSchema},
              {"run_id", h.run_id},
              {"started_at", h.started_at},
              {"tool", {{"version", h.tool_version}, {"git_sha", h.git_sha}, {"backends_built", h.backends_built}}},
              {"argv", h.argv},
              {"config", h.config},
              {"launcher", h.launcher},
              {"mpi_library", opt(h.mpi_library)},
              {"cuda_runtime", opt(h.cuda_runtime)},
              {"cuda_driver", opt(h.cuda_driver)},
              {"nccl_version", opt(h.nccl_version)},
              {"hosts", hosts},
              {"env", h.env},
              {"system", h.system},
              {"fault", opt(h.fault)}};
  out["communicators"] = h.communicators ? to_json(*h.communicators) : json(nullptr);
  if (!h.simulated.is_null()) out["simulated"] = h.simulated;
  return out;
}

json to_json(const CommunicatorCounts& c) {
  return {{"created", c.created}, {"max_live", c.max_live}};
}

json to_json(const CaseRecord& r) {
  json j = {{"kind", "case"},
            {"schema", kSchema},
            {"run_id", r.run_id},
            {"case_key", r.case_key},
            {"collective", r.collective},
            {"redop", opt(r.redop)},
            {"dtype", r.dtype},
            {"backend", r.backend},
            {"algo_requested", r.algo_requested},
            {"algo_used", opt(r.algo_used)},
            {"scope", r.scope},
            {"in_place", r.in_place},
            {"timing", r.timing},
            {"buffers", r.buffers},
            {"graph", r.graph},
            {"bytes", r.bytes},
            {"count", r.count},
            {"bytes_per_rank_send", r.bytes_per_rank_send},
            {"bytes_per_rank_recv", r.bytes_per_rank_recv},
            {"bytes_max_rank", opt(r.bytes_max_rank)},
            {"bytes_logical_total", opt(r.bytes_logical_total)},
            {"num_ranks", r.num_ranks},
            {"domain_sizes", r.domain_sizes},
            {"num_domains", r.num_domains},
            {"iterations", r.iterations},
            {"warmup", r.warmup},
            {"time_us", r.time_us ? to_json(*r.time_us) : json(nullptr)},
            {"samples_us", r.samples_us},
            {"samples_dropped", r.samples_dropped},
            {"per_rank", r.per_rank ? to_json(*r.per_rank) : json(nullptr)},
            {"stop_reason", r.stop_reason},
            {"algbw_gbps", r.algbw_gbps},
            {"busbw_gbps", r.busbw_gbps},
            {"checked", r.checked},
            {"wrong", wrong_json(r)},
            {"model", r.model ? to_json(*r.model) : json(nullptr)},
            {"workload", r.workload},
            {"overlap", r.overlap},
            {"status", r.status},
            {"reason", opt(r.reason)},
            {"fault", opt(r.fault)}};
  if (r.simulated) j["simulated"] = true;
  if (r.comm_ranks) j["comm_ranks"] = *r.comm_ranks;
  if (r.root) j["root"] = *r.root;
  if (r.repeats) j["repeats"] = to_json(*r.repeats);
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it) {
    if (!j.contains(it.key())) j[it.key()] = *it;
  }
  return j;
}

RunHeader header_from_json(const json& j) {
  RunHeader h;
  h.run_id = get<std::string>(j, "run_id");
  h.started_at = get<std::string>(j, "started_at");
  const auto tool = get<json>(j, "tool");
  h.tool_version = get<std::string>(tool, "version");
  h.git_sha = get<std::string>(tool, "git_sha");
  h.backends_built = get<std::vector<std::string>>(tool, "backends_built");
  h.argv = get<std::vector<std::string>>(j, "argv");
  h.config = get<json>(j, "config");
  h.launcher = get<std::string>(j, "launcher");
  h.mpi_library = get_opt<std::string>(j, "mpi_library");
  h.cuda_runtime = get_opt<std::string>(j, "cuda_runtime");
  h.cuda_driver = get_opt<std::string>(j, "cuda_driver");
  h.nccl_version = get_opt<std::string>(j, "nccl_version");
  for (const auto& x : get<json>(j, "hosts")) {
    HostInfo hi;
    hi.rank = get<int>(x, "rank");
    hi.host = get<std::string>(x, "host");
    hi.pid = get<long>(x, "pid");
    hi.gpu_name = get_opt<std::string>(x, "gpu_name");
    hi.gpu_uuid = get_opt<std::string>(x, "gpu_uuid");
    hi.pci_bus_id = get_opt<std::string>(x, "pci_bus_id");
    hi.nic = get_opt<std::string>(x, "nic");
    h.hosts.push_back(std::move(hi));
  }
  h.env = get<std::map<std::string, std::string>>(j, "env");
  h.system = j.value("system", json(nullptr));
  h.fault = get_opt<std::string>(j, "fault");
  h.simulated = j.value("simulated", json(nullptr));
  if (const auto c = j.find("communicators"); c != j.end() && !c->is_null()) {  // absent in older files
    h.communicators = CommunicatorCounts{get<int>(*c, "created"), get<int>(*c, "max_live")};
  }
  return h;
}

// The record keys that are fields of CaseRecord; every other key goes to `extra`.
const std::vector<std::string>& case_field_keys() {
  static const std::vector<std::string> kKnown{"kind",
                                               "schema",
                                               "run_id",
                                               "case_key",
                                               "collective",
                                               "redop",
                                               "dtype",
                                               "backend",
                                               "algo_requested",
                                               "algo_used",
                                               "scope",
                                               "in_place",
                                               "timing",
                                               "buffers",
                                               "graph",
                                               "bytes",
                                               "count",
                                               "bytes_per_rank_send",
                                               "bytes_per_rank_recv",
                                               "bytes_max_rank",
                                               "bytes_logical_total",
                                               "num_ranks",
                                               "domain_sizes",
                                               "num_domains",
                                               "iterations",
                                               "warmup",
                                               "time_us",
                                               "samples_us",
                                               "samples_dropped",
                                               "per_rank",
                                               "stop_reason",
                                               "algbw_gbps",
                                               "busbw_gbps",
                                               "checked",
                                               "wrong",
                                               "model",
                                               "workload",
                                               "overlap",
                                               "status",
                                               "reason",
                                               "fault",
                                               "simulated",
                                               "repeats"};
  return kKnown;
}

namespace {

// What was measured: collective, dtype, backend, algorithm, scope, buffers.
void identity_from_json(const json& j, CaseRecord& r) {
  r.run_id = get<std::string>(j, "run_id");
  r.case_key = get<std::string>(j, "case_key");
  r.collective = get<std::string>(j, "collective");
  r.redop = get_opt<std::string>(j, "redop");
  r.dtype = get<std::string>(j, "dtype");
  r.backend = get<std::string>(j, "backend");
  r.algo_requested = get<std::string>(j, "algo_requested");
  r.algo_used = get_opt<std::string>(j, "algo_used");
  r.scope = get<std::string>(j, "scope");
  r.in_place = get<bool>(j, "in_place");
  r.timing = get<std::string>(j, "timing");
  r.buffers = get<std::string>(j, "buffers");
  r.graph = get_opt<int>(j, "graph").value_or(0);
}

// Bytes, ranks and domains, iterations.
void sizes_from_json(const json& j, CaseRecord& r) {
  r.bytes = get<std::uint64_t>(j, "bytes");
  r.count = get<std::uint64_t>(j, "count");
  r.bytes_per_rank_send = get<std::uint64_t>(j, "bytes_per_rank_send");
  r.bytes_per_rank_recv = get<std::uint64_t>(j, "bytes_per_rank_recv");
  r.bytes_max_rank = get_opt<std::uint64_t>(j, "bytes_max_rank");
  r.bytes_logical_total = get_opt<std::uint64_t>(j, "bytes_logical_total");
  r.num_ranks = get<int>(j, "num_ranks");
  r.domain_sizes = get<std::vector<int>>(j, "domain_sizes");
  r.num_domains = get<int>(j, "num_domains");
  r.iterations = get<int>(j, "iterations");
  r.warmup = get<int>(j, "warmup");
}

TimeStats time_stats_from_json(const json& t) {
  TimeStats ts;
  ts.p50 = get<double>(t, "p50");
  ts.p5 = get<double>(t, "p5");
  ts.p95 = get<double>(t, "p95");
  ts.p99 = get<double>(t, "p99");
  ts.min = get<double>(t, "min");
  ts.max = get<double>(t, "max");
  ts.mean = get<double>(t, "mean");
  ts.stdev = get<double>(t, "stdev");
  ts.cv = get<double>(t, "cv");
  ts.ci95_low = get<double>(t, "ci95_low");
  ts.ci95_high = get<double>(t, "ci95_high");
  return ts;
}

// Times, samples, per-rank times and bandwidths.
void timing_from_json(const json& j, CaseRecord& r) {
  if (const auto t = get_opt<json>(j, "time_us")) r.time_us = time_stats_from_json(*t);
  r.samples_us = get<std::vector<double>>(j, "samples_us");
  r.samples_dropped = get_opt<std::uint64_t>(j, "samples_dropped").value_or(0);
  if (const auto pr = get_opt<json>(j, "per_rank")) {
    r.per_rank = PerRank{get<std::vector<double>>(*pr, "mean_us"), get<std::vector<double>>(*pr, "max_us"),
                         get<std::vector<double>>(*pr, "wait_us")};
  }
  r.stop_reason = get<std::string>(j, "stop_reason");
  r.algbw_gbps = get<double>(j, "algbw_gbps");
  r.busbw_gbps = get<double>(j, "busbw_gbps");
}

// `checked` and `wrong`: {total, by_rank: {rank: count}}.
void verification_from_json(const json& j, CaseRecord& r) {
  r.checked = get<bool>(j, "checked");
  const auto wrong = get<json>(j, "wrong");
  r.wrong_total = get<std::uint64_t>(wrong, "total");
  const json by_rank = get<json>(wrong, "by_rank");
  if (!by_rank.is_object()) throw InputError("record key 'wrong.by_rank' must be an object {rank: count}");
  for (auto it = by_rank.begin(); it != by_rank.end(); ++it) {
    int rank = -1;
    const std::string& key = it.key();
    const auto res = std::from_chars(key.data(), key.data() + key.size(), rank);
    if (key.empty() || res.ec != std::errc{} || res.ptr != key.data() + key.size() || rank < 0) {
      throw InputError(fmt::format("record key 'wrong.by_rank' has '{}' where a rank number belongs", key));
    }
    r.wrong_by_rank[rank] = get<std::uint64_t>(by_rank, key.c_str());
  }
}

ModelFields model_from_json(const json& m) {
  ModelFields mf;
  mf.system = get<std::string>(m, "system");
  mf.bound_time_us = get<double>(m, "bound_time_us");
  mf.bound_algbw_gbps = get<double>(m, "bound_algbw_gbps");
  mf.bound_busbw_gbps = get<double>(m, "bound_busbw_gbps");
  mf.expected_time_us = get<double>(m, "expected_time_us");
  mf.expected_busbw_gbps = get<double>(m, "expected_busbw_gbps");
  mf.efficiency = get<double>(m, "efficiency");
  mf.wire_bytes_per_rank = get<double>(m, "wire_bytes_per_rank");
  return mf;
}

// comm_ranks and root (fields only when they are integers), then every unknown key into `extra`.
void extra_from_json(const json& j, CaseRecord& r) {
  // A comm_ranks that is not an integer stays in `extra`, as before it was a field of its own.
  if (const auto it = j.find("comm_ranks"); it != j.end() && it->is_number_integer()) r.comm_ranks = it->get<int>();
  if (const auto it = j.find("root"); it != j.end() && it->is_number_integer()) r.root = it->get<int>();
  const auto& known = case_field_keys();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if ((it.key() == "comm_ranks" && r.comm_ranks) || (it.key() == "root" && r.root)) continue;
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) r.extra[it.key()] = *it;
  }
}

}  // namespace

CaseRecord case_from_json(const json& j) {
  CaseRecord r;
  identity_from_json(j, r);
  sizes_from_json(j, r);
  timing_from_json(j, r);
  verification_from_json(j, r);
  if (const auto m = get_opt<json>(j, "model")) r.model = model_from_json(*m);
  r.workload = j.value("workload", json(nullptr));
  r.overlap = j.value("overlap", json(nullptr));
  r.status = get<std::string>(j, "status");
  r.reason = get_opt<std::string>(j, "reason");
  r.fault = get_opt<std::string>(j, "fault");
  r.simulated = j.contains("simulated") && j.at("simulated").is_boolean() && j.at("simulated").get<bool>();
  if (const auto rep = get_opt<json>(j, "repeats")) r.repeats = repeats_from_json(*rep);
  extra_from_json(j, r);
  return r;
}

}  // namespace collbench::record
