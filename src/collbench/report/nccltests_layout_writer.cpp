// The nccl-tests console layout (nccltests_layout_writer.hpp).
#include "collbench/report/nccltests_layout_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "collbench/core/collective_facts.hpp"
#include "collbench/report/table.hpp"

namespace collbench::report {

using record::CaseRecord;

std::string nccltests_number(double value, int width) {
  const auto w = static_cast<std::size_t>(width);
  for (const int decimals : {2, 1, 0}) {
    std::string s = fmt::format("{:>{}.{}f}", value, w, decimals);
    if (s.size() <= w) return s;
  }
  return fmt::format("{:>{}.{}e}", value, w, width >= 7 ? 1 : 0);
}

std::string nccltests_type_name(std::string_view dtype) {
  static const std::map<std::string_view, std::string_view> names = {
      {"float32", "float"}, {"float16", "half"}, {"float64", "double"},    {"bfloat16", "bfloat16"},
      {"int32", "int32"},   {"int64", "int64"},  {"float8e4m3", "f8e4m3"}, {"float8e5m2", "f8e5m2"}};
  const auto it = names.find(dtype);
  return std::string(it == names.end() ? dtype : it->second);
}

std::string nccltests_program(std::string_view collective) {
  const CollectiveFacts* f = find_collective_facts(collective);
  return f != nullptr && f->nccl_tests ? std::string(f->nccl_tests_binary) : "collbench_" + std::string(collective);
}

namespace {

// The case key without its in_place field: what a case shares with its in-place twin.
std::string key_without_place(const std::string& case_key) {
  std::string out;
  std::size_t start = 0;
  for (int field = 0; start <= case_key.size(); ++field) {
    const std::size_t bar = std::min(case_key.find('|', start), case_key.size());
    if (field != 6) out += case_key.substr(start, bar - start) + "|";
    start = bar + 1;
  }
  return out;
}

bool timed(const CaseRecord& r) {
  return r.time_us.has_value() && r.status != "waived";
}

// The planned cases of the run header's configuration that belong to a block.
std::vector<nlohmann::json> block_cases(const record::RunHeader& header, const CaseRecord& r) {
  std::vector<nlohmann::json> out;
  const auto& config = header.config;
  if (!config.is_object() || !config.contains("cases") || !config["cases"].is_array()) return out;
  for (const auto& c : config["cases"]) {
    if (c.value("collective", "") == r.collective && c.value("backend", "") == r.backend &&
        c.value("timing", "") == r.timing)
      out.push_back(c);
  }
  return out;
}

// "key: value" for a setting every case of the block shares; empty when they differ.
std::string shared(const std::vector<nlohmann::json>& cases, const char* key, const char* label) {
  std::set<std::string> values;
  for (const auto& c : cases)
    if (c.contains(key)) values.insert(c[key].dump());
  if (values.size() != 1) return {};
  std::string v = *values.begin();
  if (v == "true" || v == "false") v = v == "true" ? "1" : "0";
  return fmt::format(" {}: {}", label, v);
}

// nccl-tests' run-parameter line, with what the planned cases of the block share.
std::string parameter_line(const std::vector<nlohmann::json>& cases) {
  std::string out = "# nThread 1 nGpus 1";
  if (!cases.empty()) {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& c : cases) {
      lo = std::min<std::uint64_t>(lo, c.value("bytes", std::uint64_t{0}));
      hi = std::max<std::uint64_t>(hi, c.value("bytes", std::uint64_t{0}));
    }
    out += fmt::format(" minBytes {} maxBytes {}", lo, hi);
  }
  out += shared(cases, "warmup", "warmup iters");
  bool fixed = !cases.empty();
  for (const auto& c : cases) fixed = fixed && c.value("min_iters", 0) == c.value("max_iters", -1);
  if (fixed) out += shared(cases, "max_iters", "iters");
  if (!cases.empty() && cases.front().value("timing", "") == "pipelined") out += shared(cases, "batch", "agg iters");
  out += shared(cases, "check", "validation");
  out += shared(cases, "graph", "graph");
  return out + "\n";
}

// "#  Rank  0 Group  0 Pid  1234 on host device  0 [bus] name": the device is the rank's index
// on its host (collbench binds local rank i to device i).
std::string device_lines(const record::RunHeader& header) {
  std::string out = "# Using devices\n";
  std::map<std::string, int> per_host;
  for (const auto& h : header.hosts) {
    const int local = per_host[h.host]++;
    out += fmt::format("#  Rank {:>2} Group  0 Pid {:>6} on {:>10} device {:>2} [{}] {}\n", h.rank, h.pid, h.host,
                       local, h.pci_bus_id.value_or("none"), h.gpu_name.value_or("CPU (host memory, no GPU)"));
  }
  return out;
}

class NcclTestsLayoutWriter final : public ConsoleWriter {
 public:
  explicit NcclTestsLayoutWriter(bool per_iteration) : per_iteration_(per_iteration) {}

  std::string begin(const record::RunHeader& header) override {
    header_ = header;
    return {};
  }

  std::string add(const CaseRecord& r) override {
    std::string out;
    if (block_ && needs_new_header(*block_, r)) out += close_block();
    if (!block_) out += open_block(r);
    if (!timed(r)) return out + flush_held() + skipped_line(r);
    if (held_) {
      if (r.in_place && key_without_place(held_->case_key) == key_without_place(r.case_key)) {
        out += row(&*held_, &r);
        held_.reset();
        return out;
      }
      out += flush_held();
    }
    if (!r.in_place && in_place_group_) {
      held_ = r;
      return out;
    }
    return out + (r.in_place ? row(nullptr, &r) : row(&r, nullptr));
  }

  std::string end(const std::vector<CaseRecord>& /*records*/) override { return block_ ? close_block() : ""; }

 private:
  std::string open_block(const CaseRecord& r) {
    block_ = r;
    wrong_ = 0;
    busbw_sum_ = 0.0;
    busbw_count_ = 0;
    const auto cases = block_cases(header_, r);
    out_of_place_group_ = cases.empty();
    in_place_group_ = cases.empty();
    std::set<long long> roots;
    for (const auto& c : cases) {
      (c.value("in_place", false) ? in_place_group_ : out_of_place_group_) = true;
      roots.insert(c.value("root", 0LL));
    }
    root_ = record::rooted_collective(r.collective) && roots.size() == 1 ? *roots.begin() : -1;
    std::string out = fmt::format("# collbench {} (--layout nccl-tests): backend {}, domains [{}], timing {}{}\n",
                                  header_.tool_version, r.backend, join_sizes(r.domain_sizes), r.timing,
                                  r.simulated ? ", SIMULATED (SimGrid SMPI): times are simulated, not measured" : "");
    out += fmt::format("# Collective test starting: {}\n", nccltests_program(r.collective));
    out += parameter_line(cases) + "#\n" + device_lines(header_) + "#\n" + table_lines();
    return out;
  }

  std::string table_lines() const {
    const std::vector<bool> groups = {out_of_place_group_, in_place_group_};
    std::string group_line = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "", "", "", "", "");
    std::string labels = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "size", "count", "type", "redop", "root");
    std::string units = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "(B)", "(elements)", "", "", "");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (!groups[g]) continue;
      group_line += fmt::format("  {:^{}}", g == 0 ? "out-of-place" : "in-place", per_iteration_ ? 67 : 31);
      labels += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "time", "algbw", "busbw", "#wrong");
      units += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "(us)", "(GB/s)", "(GB/s)", "");
      if (per_iteration_) {
        labels += fmt::format("  {:>7}  {:>7}  {:>7}  {:>7}", "i_min", "i_max", "i_p99", "i_cv%");
        units += fmt::format("  {:>7}  {:>7}  {:>7}  {:>7}", "(us)", "(us)", "(us)", "(%)");
      }
    }
    return group_line + "\n" + labels + "\n" + units + "\n";
  }

  static std::string join_sizes(const std::vector<int>& sizes) {
    std::string s;
    for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
    return s;
  }

  // One half of a row: the record's p50, algbw, busbw and wrong elements (N/A without a case).
  std::string half(const CaseRecord* r) {
    if (r == nullptr) {
      std::string out = fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "N/A", "N/A", "N/A", "N/A");
      if (per_iteration_) out += fmt::format("  {:>7}  {:>7}  {:>7}  {:>7}", "N/A", "N/A", "N/A", "N/A");
      return out;
    }
    wrong_ += r->wrong_total;
    busbw_sum_ += r->busbw_gbps;
    ++busbw_count_;
    const auto& t = *r->time_us;
    std::string out = fmt::format("  {}  {}  {}  {:>6}", nccltests_number(t.p50, 7), nccltests_number(r->algbw_gbps, 6),
                                  nccltests_number(r->busbw_gbps, 6),
                                  r->checked ? std::to_string(r->wrong_total) : std::string("N/A"));
    if (per_iteration_) {
      out += fmt::format("  {}  {}  {}  {}", nccltests_number(t.min, 7), nccltests_number(t.max, 7),
                         nccltests_number(t.p99, 7), nccltests_number(100.0 * t.cv, 7));
    }
    return out;
  }

  std::string row(const CaseRecord* out_of_place, const CaseRecord* in_place) {
    const CaseRecord& r = out_of_place != nullptr ? *out_of_place : *in_place;
    std::string out = fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.bytes, r.count, nccltests_type_name(r.dtype),
                                  r.redop.value_or("none"), row_root(r));
    if (out_of_place_group_) out += half(out_of_place);
    if (in_place_group_) out += half(in_place);
    return out + "\n";
  }

  // The record's own root (broadcast records carry it), else the block's for older records.
  long long row_root(const CaseRecord& r) const {
    return r.root && record::rooted_collective(r.collective) ? *r.root : root_;
  }

  std::string flush_held() {
    if (!held_) return {};
    const CaseRecord r = *held_;
    held_.reset();
    return row(&r, nullptr);
  }

  // A case without a time, as a comment that no nccl-tests parser reads as a row.
  static std::string skipped_line(const CaseRecord& r) {
    return fmt::format("# {} {} B {} {}: {}\n", r.status, r.bytes, nccltests_type_name(r.dtype),
                       r.in_place ? "in place" : "out of place", r.reason.value_or("no time"));
  }

  std::string close_block() {
    std::string out = flush_held();
    out += fmt::format("# Out of bounds values : {} {}\n", wrong_, wrong_ == 0 ? "OK" : "FAILED");
    out += fmt::format("# Avg bus bandwidth    : {:g} \n",
                       busbw_count_ > 0 ? busbw_sum_ / static_cast<double>(busbw_count_) : 0.0);
    out += fmt::format("#\n# Collective test concluded: {}\n#\n", nccltests_program(block_->collective));
    block_.reset();
    return out;
  }

  bool per_iteration_;
  record::RunHeader header_;
  std::optional<CaseRecord> block_;  // the first record of the open block
  std::optional<CaseRecord> held_;   // an out-of-place case waiting for its in-place twin
  bool out_of_place_group_ = true, in_place_group_ = true;
  long long root_ = -1;
  std::uint64_t wrong_ = 0;
  double busbw_sum_ = 0.0;
  int busbw_count_ = 0;
};

}  // namespace

std::unique_ptr<ConsoleWriter> make_nccltests_layout_writer(bool per_iteration) {
  return std::make_unique<NcclTestsLayoutWriter>(per_iteration);
}

}  // namespace collbench::report
