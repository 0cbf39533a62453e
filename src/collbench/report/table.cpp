// Table and CSV rendering.
#include "collbench/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collbench/core/join.hpp"
#include "collbench/report/overlap_text.hpp"
#include "collbench/report/repeats_line.hpp"

namespace collbench::report {

using record::CaseRecord;

namespace {

std::string domains_text(const CaseRecord& r) {
  return join_ints(r.domain_sizes);
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// MoE cases: what ran and where the bytes went, one comment line under the row (the record's
// workload block rendered; docs/moe.md).
std::string workload_line(const CaseRecord& r) {
  const auto& w = r.workload;
  if (!w.is_object()) return {};
  const auto num = [&w](const char* key) { return w.contains(key) && w[key].is_number() ? w[key].get<double>() : 0.0; };
  const auto text = [&w](const char* key) {
    return w.contains(key) && w[key].is_string() ? w[key].get<std::string>() : std::string("-");
  };
  const auto mb = [](double bytes) { return fmt::format("{:.3g}", bytes / 1e6); };
  std::string out =
      fmt::format("#   {} T={} {} ep{} {}: imbalance {:.3f} hottest rank {} | MB in-domain {} off-domain {}",
                  text("name"), static_cast<long long>(num("tokens_per_rank")), text("routing"),
                  static_cast<long long>(num("ep_size")), text("row_convention"), num("imbalance"),
                  static_cast<long long>(num("hottest_rank")), mb(num("bytes_in_domain")), mb(num("bytes_off_domain")));
  if (w.contains("link_bytes_max_rank") && w["link_bytes_max_rank"].is_object()) {
    const auto& m = w["link_bytes_max_rank"];
    const auto get = [&m](const char* key) { return m.contains(key) ? m[key].get<double>() : 0.0; };
    out += fmt::format(" (max rank send/recv: in {}/{} off {}/{})", mb(get("send_in_domain")),
                       mb(get("recv_in_domain")), mb(get("send_off_domain")), mb(get("recv_off_domain")));
  }
  if (r.bytes_logical_total) out += fmt::format(" logical {}", mb(static_cast<double>(*r.bytes_logical_total)));
  if (w.contains("counts_exchange") && w["counts_exchange"].is_string()) {
    out += fmt::format(" | counts {}", text("counts_exchange"));
    if (w.contains("counts_exchange_us") && w["counts_exchange_us"].is_number()) {
      out += fmt::format(" {:.1f} us", num("counts_exchange_us"));
    }
  }
  return out + "\n";
}

// Overlap mode: the record's overlap block rendered under the row (docs/overlap.md).
std::string overlap_line(const CaseRecord& r) {
  const auto& o = r.overlap;
  if (!o.is_object()) return {};
  const auto num = [&o](const char* key) { return o.contains(key) && o[key].is_number() ? o[key].get<double>() : 0.0; };
  std::string load = "?";
  if (o.contains("compute") && o["compute"].is_object()) {
    load =
        o["compute"].value("description", std::string("?")) + " on " + o["compute"].value("device", std::string("?"));
  }
  std::string out =
      fmt::format("#   overlap {}: comm {:.1f} us, compute {:.1f} us, both {:.1f} us -> exposed {}, efficiency {}",
                  load, num("t_comm_us"), num("t_compute_us"), num("t_both_us"), overlap_exposed_text(o, 1),
                  overlap_efficiency_text(o, 2));
  if (o.contains("pipeline") && o["pipeline"].is_object()) {
    const auto& p = o["pipeline"];
    const auto pn = [&p](const char* key) {
      return p.contains(key) && p[key].is_number() ? p[key].get<double>() : 0.0;
    };
    out += fmt::format(
        " | pipeline {} chunks: step {:.1f} us vs ideal {:.1f} us (x{:.2f}), schedule {:.1f} us, serial "
        "{:.1f} us",
        static_cast<int>(pn("chunks")), pn("step_us"), pn("ideal_us"), pn("step_over_ideal"), pn("schedule_us"),
        pn("serial_us"));
  }
  return out + "\n";
}

// ep-dp-concurrent: the side timings and the interference ratio under the row (its busbw is 0:
// two operations on different links have no single bus bandwidth; docs/acceptance.md).
std::string concurrent_line(const CaseRecord& r) {
  const auto it = r.extra.find("concurrent");
  if (it == r.extra.end() || !it->is_object()) return {};
  const auto& c = *it;
  const auto num = [&c](const char* key) { return c.contains(key) && c[key].is_number() ? c[key].get<double>() : 0.0; };
  return fmt::format(
      "#   concurrent: EP all-to-all {} B x {} ranks alone {:.1f} us, DP all-reduce {} B x {} ranks alone {:.1f} us, "
      "both {:.1f} us -> interference {:.3f} (both / slower alone)\n",
      static_cast<long long>(num("ep_bytes")), static_cast<int>(num("ep_ranks")), num("ep_alone_us"),
      static_cast<long long>(num("dp_bytes")), static_cast<int>(num("dp_ranks")), num("dp_alone_us"), num("both_us"),
      num("interference"));
}

}  // namespace

bool needs_new_header(const CaseRecord& prev, const CaseRecord& next) {
  return prev.collective != next.collective || prev.backend != next.backend || prev.num_ranks != next.num_ranks ||
         prev.domain_sizes != next.domain_sizes || prev.timing != next.timing || prev.simulated != next.simulated;
}

bool needs_root_column(const CaseRecord& r) {
  return record::rooted_collective(r.collective) && r.root && *r.root != 0;
}

bool needs_root_column(const std::vector<CaseRecord>& records) {
  return std::any_of(records.begin(), records.end(), [](const CaseRecord& r) { return needs_root_column(r); });
}

std::string root_text(const CaseRecord& r, std::string_view none) {
  return r.root && record::rooted_collective(r.collective) ? std::to_string(*r.root) : std::string(none);
}

std::string table_header(const CaseRecord& first, bool root_column) {
  std::string out = fmt::format("# {}  backend {}  ranks {}  domains [{}]  timing {}{}\n", first.collective,
                                first.backend, first.num_ranks, domains_text(first), first.timing,
                                first.simulated ? "  SIMULATED (SimGrid SMPI): times are simulated, not measured" : "");
  const std::string root = root_column ? fmt::format(" {:>4}", "root") : "";
  out += fmt::format("#{:>12} {:>11} {:>10} {:>5}{} {:>12} {:>6} {:>5} {:>10} {:>10} {:>8} {:>8} {:>7} {:>7} {:>6}\n",
                     "size", "count", "type", "redop", root, "algo", "scope", "place", "time", "p99", "algbw", "busbw",
                     "#wrong", "samples", "%bound");
  out += fmt::format("#{:>12} {:>11} {:>10} {:>5}{} {:>12} {:>6} {:>5} {:>10} {:>10} {:>8} {:>8} {:>7} {:>7} {:>6}\n",
                     "(B)", "(elements)", "", "", root_column ? fmt::format(" {:>4}", "") : "", "", "", "", "(us)",
                     "(us)", "(GB/s)", "(GB/s)", "", "", "");
  return out;
}

std::string table_row(const CaseRecord& r, bool root_column) {
  const std::string place = r.in_place ? "in" : "out";
  const std::string algo = r.algo_used ? *r.algo_used : r.algo_requested;
  const std::string root = root_column ? fmt::format(" {:>4}", root_text(r, "-")) : "";
  if (r.status == "waived" || !r.time_us) {
    return fmt::format(" {:>12} {:>11} {:>10} {:>5}{} {:>12} {:>6} {:>5}  {}: {}\n", r.bytes, r.count, r.dtype,
                       r.redop.value_or("-"), root, algo, r.scope, place, r.status, r.reason.value_or("")) +
           workload_line(r);
  }
  const std::string wrong = r.checked ? std::to_string(r.wrong_total) : "N/A";
  const std::string pct = r.model ? fmt::format("{:.1f}", 100.0 * r.model->efficiency) : "-";
  return fmt::format(
             " {:>12} {:>11} {:>10} {:>5}{} {:>12} {:>6} {:>5} {:>10.2f} {:>10.2f} {:>8.2f} {:>8.2f} {:>7} {:>7} "
             "{:>6}\n",
             r.bytes, r.count, r.dtype, r.redop.value_or("-"), root, algo, r.scope, place, r.time_us->p50,
             r.time_us->p99, r.algbw_gbps, r.busbw_gbps, wrong, r.iterations, pct) +
         workload_line(r) + overlap_line(r) + concurrent_line(r) + repeats_line(r);
}

void TableTotals::add(const CaseRecord& r) {
  wrong += r.wrong_total;
  if (r.time_us) {
    busbw_sum += r.busbw_gbps;
    ++measured;
  }
  if (r.status == "waived") ++waived;
}

std::string table_footer(const TableTotals& totals) {
  const std::uint64_t wrong = totals.wrong;
  std::string out = fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
  out += fmt::format("# Avg bus bandwidth    : {:.6g}\n",
                     totals.measured ? totals.busbw_sum / static_cast<double>(totals.measured) : 0.0);
  if (totals.waived) out += fmt::format("# Waived cases         : {}\n", totals.waived);
  return out;
}

std::string table_footer(const std::vector<CaseRecord>& records) {
  TableTotals totals;
  for (const auto& r : records) totals.add(r);
  return table_footer(totals);
}

std::string render_table(const std::vector<CaseRecord>& records) {
  const bool root_column = needs_root_column(records);
  std::string out;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i == 0 || needs_new_header(records[i - 1], records[i])) out += table_header(records[i], root_column);
    out += table_row(records[i], root_column);
  }
  out += table_footer(records);
  return out;
}

std::string csv_header() {
  return "collective,backend,algo_requested,algo_used,scope,in_place,timing,dtype,redop,bytes,count,num_ranks,"
         "domain_sizes,iterations,p50_us,p5_us,p95_us,p99_us,min_us,max_us,mean_us,cv,algbw_gbps,busbw_gbps,"
         "wrong,status,reason,bound_time_us,expected_time_us,efficiency,case_key,t_comm_us,t_compute_us,t_both_us,"
         "exposed_us,overlap_efficiency,root\n";
}

// The overlap columns (empty without overlap mode).
std::string overlap_csv(const CaseRecord& r) {
  const auto& o = r.overlap;
  const auto num = [&o](const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_number() ? fmt::format("{:.6g}", o[key].get<double>())
                                                                  : std::string();
  };
  return fmt::format(",{},{},{},{},{}", num("t_comm_us"), num("t_compute_us"), num("t_both_us"), num("exposed_us"),
                     num("efficiency"));
}

// A case that was not measured (waived, or failed before timing) has no times, rates or
// iterations: those fields are empty, not 0 (a reader must not average a zero in).
std::string csv_row(const CaseRecord& r) {
  const bool timed = r.time_us.has_value();
  const auto t = r.time_us.value_or(record::TimeStats{});
  const auto num = [timed](double v) { return timed ? fmt::format("{:.6g}", v) : std::string(); };
  const auto count = [timed](auto v) { return timed ? fmt::format("{}", v) : std::string(); };
  const bool m = r.model.has_value();
  const auto model = [m](double v) { return m ? fmt::format("{:.6g}", v) : std::string(); };
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                     r.collective, r.backend, r.algo_requested, r.algo_used.value_or(""), r.scope,
                     r.in_place ? "true" : "false", r.timing, r.dtype, r.redop.value_or(""), r.bytes,
                     r.count > 0 || timed ? std::to_string(r.count) : "", r.num_ranks, csv_escape(domains_text(r)),
                     count(r.iterations), num(t.p50), num(t.p5), num(t.p95), num(t.p99), num(t.min), num(t.max),
                     num(t.mean), num(t.cv), num(r.algbw_gbps), num(r.busbw_gbps),
                     r.status == "waived" ? std::string() : std::to_string(r.wrong_total), r.status,
                     csv_escape(r.reason.value_or("")), model(r.model ? r.model->bound_time_us : 0.0),
                     model(r.model ? r.model->expected_time_us : 0.0), model(r.model ? r.model->efficiency : 0.0),
                     csv_escape(r.case_key)) +
         overlap_csv(r) + "," + root_text(r, "") + "\n";
}

std::string render_csv(const std::vector<CaseRecord>& records) {
  std::string out = csv_header();
  for (const auto& r : records) out += csv_row(r);
  return out;
}

}  // namespace collbench::report
