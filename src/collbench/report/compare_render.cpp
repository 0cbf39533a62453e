// Comparison tables: the console table and CSV of what compare_files() computed.
#include "collbench/report/compare_render.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace collbench::report {

using compare::CompareBy;
using compare::Comparison;

namespace {

std::string place_text(bool in_place) {
  return in_place ? "in" : "out";
}

std::string compare_ratio_text(const std::optional<double>& v, const char* fmt_spec) {
  return v ? fmt::format(fmt::runtime(fmt_spec), *v) : std::string("-");
}

}  // namespace

std::string render_comparison_table(const Comparison& c) {
  std::string out;
  for (const auto& other : c.others) {
    out += fmt::format("# compare by {}: {}  vs baseline  {}\n", to_string(c.by), other, c.baseline);
    out += fmt::format(
        "#{:>13} {:>6} {:>10} {:>5} {:>12} {:>6} {:>5} {:>12} {:>11} {:>11} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8}\n",
        "collective", "ranks", "type", "redop", "algo", "scope", "place", "size", "base p50", "p50", "time", "time",
        "base bus", "busbw", "busbw", "busbw");
    out += fmt::format(
        "#{:>13} {:>6} {:>10} {:>5} {:>12} {:>6} {:>5} {:>12} {:>11} {:>11} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8}\n", "",
        "", "", "", "", "", "", "(B)", "(us)", "(us)", "ratio", "%chg", "(GB/s)", "(GB/s)", "ratio", "%chg");
    std::size_t n = 0;
    for (const auto& r : c.rows) {
      if (r.other != other) continue;
      ++n;
      out += fmt::format(
          " {:>13} {:>6} {:>10} {:>5} {:>12} {:>6} {:>5} {:>12} {:>11.2f} {:>11.2f} {:>8.3f} {:>+8.1f} "
          "{:>9.2f} {:>9.2f} {:>8} {:>8}\n",
          r.collective, r.num_ranks, r.dtype, r.redop.value_or("-"), c.by == CompareBy::algo ? "*" : r.algo, r.scope,
          place_text(r.in_place), r.bytes, r.base_p50_us, r.other_p50_us, r.time_ratio, r.time_change_pct,
          r.base_busbw_gbps, r.other_busbw_gbps, compare_ratio_text(r.busbw_ratio, "{:.3f}"),
          compare_ratio_text(r.busbw_change_pct, "{:+.1f}"));
    }
    if (n == 0) out += "#  no matching cases\n";
  }
  out += "# time ratio = p50 / baseline p50 (> 1: slower); busbw ratio = busbw / baseline busbw (> 1: faster)\n";
  for (const auto& note : c.notes) out += "# note: " + note + "\n";
  return out;
}

std::string render_comparison_csv(const Comparison& c) {
  std::string out =
      "compare_by,baseline,other,collective,redop,dtype,backend,algo_requested,scope,in_place,timing,bytes,num_ranks,"
      "domain_sizes,base_p50_us,other_p50_us,time_ratio,time_change_pct,base_busbw_gbps,other_busbw_gbps,busbw_ratio,"
      "busbw_change_pct\n";
  const auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) {
      if (ch == '"') q += '"';
      q += ch;
    }
    return q + "\"";
  };
  const auto num = [](double v) { return fmt::format("{:.6g}", v); };
  for (const auto& r : c.rows) {
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", to_string(c.by),
                    quote(c.baseline), quote(r.other), r.collective, r.redop.value_or(""), r.dtype, r.backend, r.algo,
                    r.scope, r.in_place ? "true" : "false", r.timing, r.bytes, r.num_ranks,
                    quote(fmt::format("{}", fmt::join(r.domain_sizes, ","))), num(r.base_p50_us), num(r.other_p50_us),
                    num(r.time_ratio), num(r.time_change_pct), num(r.base_busbw_gbps), num(r.other_busbw_gbps),
                    r.busbw_ratio ? num(*r.busbw_ratio) : "", r.busbw_change_pct ? num(*r.busbw_change_pct) : "");
  }
  return out;
}

}  // namespace collbench::report
