// A case record read straight from its JSONL line (see case_scan.hpp). Every test below returns
// false, never throws, where the general reader would refuse, warn or convert: the line then goes
// to that reader, which gives its own message.
#include "collbench/record/case_scan.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "collbench/record/json_scan.hpp"

// Inside json_scan, whose tests read as the grammar below (no using-directive: unity builds join
// this file with others of the record layer).
namespace collbench::record::json_scan {
namespace {

using nlohmann::json;

bool time_stats_value(Scanner& in, TimeStats& t) {
  static constexpr std::array<std::string_view, 11> kNames{"p50",  "p5",    "p95", "p99",      "min",      "max",
                                                           "mean", "stdev", "cv",  "ci95_low", "ci95_high"};
  const std::array<double*, 11> fields{&t.p50,  &t.p5,    &t.p95, &t.p99,      &t.min,      &t.max,
                                       &t.mean, &t.stdev, &t.cv,  &t.ci95_low, &t.ci95_high};
  return object_of(in, kNames, [&](std::size_t k) { return double_value(in, *fields[k]); });
}

bool per_rank_value(Scanner& in, PerRank& p) {
  static constexpr std::array<std::string_view, 3> kNames{"mean_us", "max_us", "wait_us"};
  const std::array<std::vector<double>*, 3> fields{&p.mean_us, &p.max_us, &p.wait_us};
  return object_of(in, kNames, [&](std::size_t k) { return doubles_value(in, *fields[k]); });
}

bool model_value(Scanner& in, ModelFields& m) {
  static constexpr std::array<std::string_view, 8> kNames{
      "system",           "bound_time_us",       "bound_algbw_gbps", "bound_busbw_gbps",
      "expected_time_us", "expected_busbw_gbps", "efficiency",       "wire_bytes_per_rank"};
  const std::array<double*, 8> fields{nullptr,
                                      &m.bound_time_us,
                                      &m.bound_algbw_gbps,
                                      &m.bound_busbw_gbps,
                                      &m.expected_time_us,
                                      &m.expected_busbw_gbps,
                                      &m.efficiency,
                                      &m.wire_bytes_per_rank};
  return object_of(in, kNames,
                   [&](std::size_t k) { return k == 0 ? string_value(in, m.system) : double_value(in, *fields[k]); });
}

// A rank number as case_from_json reads the keys of wrong.by_rank, written with digits only and
// without leading zeros (so that two keys are never the same rank).
bool rank_key(std::string_view key, int& rank) {
  if (key.empty() || key.size() > 9 || (key[0] == '0' && key.size() > 1)) return false;
  for (const char c : key)
    if (c < '0' || c > '9') return false;
  const auto res = std::from_chars(key.data(), key.data() + key.size(), rank);
  return res.ec == std::errc{} && res.ptr == key.data() + key.size();
}

// `wrong`: {total, by_rank: {rank: count}}.
bool wrong_value(Scanner& in, CaseRecord& r) {
  static constexpr std::array<std::string_view, 2> kNames{"total", "by_rank"};
  return object_of(in, kNames, [&](std::size_t k) {
    if (k == 0) return uint64_value(in, r.wrong_total);
    return members(in, [&](std::string_view key) {
      int rank = 0;
      std::uint64_t n = 0;
      return rank_key(key, rank) && uint64_value(in, n) && r.wrong_by_rank.emplace(rank, n).second;
    });
  });
}

// The keys of a case record that case_from_json reads; any other key goes to `extra`.
enum class Key : std::uint8_t {
  kind,
  schema,
  run_id,
  case_key,
  collective,
  redop,
  dtype,
  backend,
  algo_requested,
  algo_used,
  scope,
  in_place,
  timing,
  buffers,
  graph,
  bytes,
  count,
  bytes_per_rank_send,
  bytes_per_rank_recv,
  bytes_max_rank,
  bytes_logical_total,
  num_ranks,
  domain_sizes,
  num_domains,
  iterations,
  warmup,
  time_us,
  samples_us,
  samples_dropped,
  per_rank,
  stop_reason,
  algbw_gbps,
  busbw_gbps,
  checked,
  wrong,
  model,
  workload,
  overlap,
  status,
  reason,
  fault,
  simulated,
  repeats,
  comm_ranks,
  root,
  other,   // not a field: the general reader puts it in `extra`
  unread,  // a field of the general reader (case_field_keys) that this reader does not know: give up
};

constexpr std::uint64_t bit(Key k) {
  return std::uint64_t{1} << static_cast<unsigned>(k);
}

// The keys case_from_json requires (the others may be absent or null).
constexpr std::uint64_t kRequired =
    bit(Key::kind) | bit(Key::schema) | bit(Key::run_id) | bit(Key::case_key) | bit(Key::collective) | bit(Key::dtype) |
    bit(Key::backend) | bit(Key::algo_requested) | bit(Key::scope) | bit(Key::in_place) | bit(Key::timing) |
    bit(Key::buffers) | bit(Key::bytes) | bit(Key::count) | bit(Key::bytes_per_rank_send) |
    bit(Key::bytes_per_rank_recv) | bit(Key::num_ranks) | bit(Key::domain_sizes) | bit(Key::num_domains) |
    bit(Key::iterations) | bit(Key::warmup) | bit(Key::samples_us) | bit(Key::stop_reason) | bit(Key::algbw_gbps) |
    bit(Key::busbw_gbps) | bit(Key::checked) | bit(Key::wrong) | bit(Key::status);

// A key case_from_json reads into a field (case_field_keys).
bool is_record_field(std::string_view name) {
  static const std::unordered_set<std::string_view> kFields = [] {
    std::unordered_set<std::string_view> f;
    for (const auto& k : case_field_keys()) f.insert(k);
    return f;
  }();
  return kFields.count(name) != 0;
}

Key key_of(std::string_view name) {
  static const std::unordered_map<std::string_view, Key> kKeys = [] {
    std::unordered_map<std::string_view, Key> m;
    const std::array<std::string_view, static_cast<std::size_t>(Key::other)> names{"kind",
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
                                                                                   "repeats",
                                                                                   "comm_ranks",
                                                                                   "root"};
    for (std::size_t k = 0; k < names.size(); ++k) m.emplace(names[k], static_cast<Key>(k));
    return m;
  }();
  const auto it = kKeys.find(name);
  if (it != kKeys.end()) return it->second;
  // One list of fields (record.cpp): a field added there and not here is left to the general
  // reader rather than read into `extra`.
  return is_record_field(name) ? Key::unread : Key::other;
}

std::string* string_field(Key k, CaseRecord& r) {
  switch (k) {
    case Key::run_id:
      return &r.run_id;
    case Key::case_key:
      return &r.case_key;
    case Key::collective:
      return &r.collective;
    case Key::dtype:
      return &r.dtype;
    case Key::backend:
      return &r.backend;
    case Key::algo_requested:
      return &r.algo_requested;
    case Key::scope:
      return &r.scope;
    case Key::timing:
      return &r.timing;
    case Key::buffers:
      return &r.buffers;
    case Key::stop_reason:
      return &r.stop_reason;
    case Key::status:
      return &r.status;
    default:
      return nullptr;
  }
}

std::optional<std::string>* optional_string_field(Key k, CaseRecord& r) {
  switch (k) {
    case Key::redop:
      return &r.redop;
    case Key::algo_used:
      return &r.algo_used;
    case Key::reason:
      return &r.reason;
    case Key::fault:
      return &r.fault;
    default:
      return nullptr;
  }
}

// Integers: uint64 fields first, then int fields.
std::uint64_t* uint64_field(Key k, CaseRecord& r) {
  switch (k) {
    case Key::bytes:
      return &r.bytes;
    case Key::count:
      return &r.count;
    case Key::bytes_per_rank_send:
      return &r.bytes_per_rank_send;
    case Key::bytes_per_rank_recv:
      return &r.bytes_per_rank_recv;
    default:
      return nullptr;
  }
}

int* int_field(Key k, CaseRecord& r) {
  switch (k) {
    case Key::num_ranks:
      return &r.num_ranks;
    case Key::num_domains:
      return &r.num_domains;
    case Key::iterations:
      return &r.iterations;
    case Key::warmup:
      return &r.warmup;
    default:
      return nullptr;
  }
}

// simulated (true only for the boolean true), comm_ranks and root (fields when integers, else
// kept in `extra` as case_from_json keeps them) and every unknown key (into `extra`).
bool other_field(Scanner& in, Key k, std::string_view key, CaseRecord& r) {
  json v;
  if (!any_value(in, v, 1)) return false;
  if (k == Key::simulated) {
    r.simulated = v.is_boolean() && v.get<bool>();
    return true;
  }
  if (k == Key::comm_ranks && v.is_number_integer()) {
    r.comm_ranks = v.get<int>();
    return true;
  }
  if (k == Key::root && v.is_number_integer()) {
    r.root = v.get<int>();
    return true;
  }
  return r.extra.get_ref<json::object_t&>().try_emplace(std::string(key), std::move(v)).second;
}

// kind, schema, the optional sizes and the other keys of case_from_json's own rules.
bool special_field(Scanner& in, Key k, std::string_view key, CaseRecord& r) {
  std::string_view s;
  switch (k) {
    case Key::kind:
      return in.string(s) && s == "case";
    case Key::schema:
      return in.string(s) && s == kSchema;
    case Key::graph:
      return in.peek() == 'n' ? in.literal("null") : int_value(in, r.graph);
    case Key::samples_dropped:
      return in.peek() == 'n' ? in.literal("null") : uint64_value(in, r.samples_dropped);
    case Key::bytes_max_rank:
      return nullable(in, r.bytes_max_rank, uint64_value);
    case Key::bytes_logical_total:
      return nullable(in, r.bytes_logical_total, uint64_value);
    case Key::in_place:
      return bool_value(in, r.in_place);
    case Key::checked:
      return bool_value(in, r.checked);
    case Key::domain_sizes:
      return ints_value(in, r.domain_sizes);
    case Key::samples_us:
      return doubles_value(in, r.samples_us);
    case Key::algbw_gbps:
      return double_value(in, r.algbw_gbps);
    case Key::busbw_gbps:
      return double_value(in, r.busbw_gbps);
    case Key::time_us:
      return nullable(in, r.time_us, time_stats_value);
    case Key::per_rank:
      return nullable(in, r.per_rank, per_rank_value);
    case Key::model:
      return nullable(in, r.model, model_value);
    case Key::wrong:
      return wrong_value(in, r);
    case Key::workload:
      return any_value(in, r.workload, 1);
    case Key::overlap:
      return any_value(in, r.overlap, 1);
    case Key::repeats:
      return in.literal("null");
    default:
      return other_field(in, k, key, r);
  }
}

// One member of the record, each known key at most once.
bool field(Scanner& in, std::string_view key, CaseRecord& r, std::uint64_t& seen) {
  const Key k = key_of(key);
  if (k == Key::unread) return false;
  if (k != Key::other) {
    if ((seen & bit(k)) != 0) return false;
    seen |= bit(k);
  }
  if (auto* s = string_field(k, r)) return string_value(in, *s);
  if (auto* s = optional_string_field(k, r)) return nullable(in, *s, string_value);
  if (auto* u = uint64_field(k, r)) return uint64_value(in, *u);
  if (auto* i = int_field(k, r)) return int_value(in, *i);
  return special_field(in, k, key, r);
}

// The whole line: one object, its required keys present.
bool case_line(std::string_view line, CaseRecord& r) {
  Scanner in(line);
  std::uint64_t seen = 0;
  if (!members(in, [&](std::string_view key) { return field(in, key, r, seen); })) return false;
  return in.at_end() && (seen & kRequired) == kRequired;
}

}  // namespace
}  // namespace collbench::record::json_scan

namespace collbench::record {

std::optional<CaseRecord> scan_case_line(std::string_view line) {
  CaseRecord r;
  if (!json_scan::case_line(line, r)) return std::nullopt;
  return r;
}

}  // namespace collbench::record
