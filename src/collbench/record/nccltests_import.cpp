// nccl-tests console-log and -J JSON parsing (see the header for the layouts handled).
// Pure C++; needs no MPI, CUDA or GPU.
#include "collbench/record/nccltests_import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "collbench/core/error.hpp"

namespace collbench::record {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Small text helpers

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool starts_alpha(std::string_view s) {
  return !s.empty() && std::isalpha(static_cast<unsigned char>(s[0]));
}

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string at(const std::string& path, int line) {
  return line > 0 ? path + ":" + std::to_string(line) + ": " : path + ": ";
}

[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw InputError(at(path, line) + message);
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  if (!all_digits(s) || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

std::optional<long> to_long(std::string_view s) {
  s = trim(s);
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const auto v = to_u64(s);
  if (!v || *v > static_cast<std::uint64_t>(std::numeric_limits<long>::max())) return std::nullopt;
  const long magnitude = static_cast<long>(*v);
  return negative ? -magnitude : magnitude;
}

// Strict decimal number: the whole token must be consumed. Accepts inf/nan spellings.
std::optional<double> to_double(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return v;
}

// Half a unit in the last printed digit: "0.44" -> 0.005, "55989" -> 0.5, "1.2e+03" -> 50.
double printed_tolerance(std::string_view token) {
  std::string_view mantissa = token;
  int exponent = 0;
  const std::size_t e = token.find_first_of("eE");
  if (e != std::string_view::npos) {
    mantissa = token.substr(0, e);
    exponent = static_cast<int>(to_long(token.substr(e + 1)).value_or(0));
  }
  int decimals = 0;
  const std::size_t dot = mantissa.find('.');
  if (dot != std::string_view::npos) decimals = static_cast<int>(mantissa.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

bool is_ellipsis(std::string_view s) {
  s = trim(s);
  if (!s.empty() && (s.front() == '[' || s.front() == '(')) s.remove_prefix(1);
  return s.substr(0, 3) == "..." || s.substr(0, 3) == "\xE2\x80\xA6";  // "..." or U+2026
}

// ---------------------------------------------------------------------------------------------
// Collectives and their busbw factors

enum class FactorKind { two_n_minus_1_over_n, n_minus_1_over_n, one };

struct CollectiveInfo {
  std::string_view name;
  FactorKind kind;
};

// Longest names first, so that searching a file name finds "allreduce" before "reduce".
constexpr CollectiveInfo kCollectives[] = {
    {"reducescatter", FactorKind::n_minus_1_over_n},
    {"alltoallv", FactorKind::n_minus_1_over_n},
    {"allreduce", FactorKind::two_n_minus_1_over_n},
    {"allgather", FactorKind::n_minus_1_over_n},
    {"broadcast", FactorKind::one},
    {"hypercube", FactorKind::one},
    {"alltoall", FactorKind::n_minus_1_over_n},
    {"sendrecv", FactorKind::one},
    {"scatter", FactorKind::n_minus_1_over_n},
    {"gather", FactorKind::n_minus_1_over_n},
    {"reduce", FactorKind::one},
};

std::optional<FactorKind> factor_kind(std::string_view collective) {
  for (const auto& c : kCollectives)
    if (c.name == collective) return c.kind;
  return std::nullopt;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> out;
  for (const auto& c : kCollectives) out.emplace_back(c.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string squash(std::string_view s) {  // lower case without '_', '-', '.', ' '
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != '.' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

double factor_value(FactorKind kind, double n) {
  switch (kind) {
    case FactorKind::two_n_minus_1_over_n:
      return 2.0 * (n - 1.0) / n;
    case FactorKind::n_minus_1_over_n:
      return (n - 1.0) / n;
    case FactorKind::one:
      return 1.0;
  }
  return 1.0;
}

std::string_view factor_text(FactorKind kind) {
  switch (kind) {
    case FactorKind::two_n_minus_1_over_n:
      return "2(n-1)/n";
    case FactorKind::n_minus_1_over_n:
      return "(n-1)/n";
    case FactorKind::one:
      return "1";
  }
  return "1";
}

// ---------------------------------------------------------------------------------------------
// Rank count: from a complete device list, or recovered from the busbw/algbw ratio.

struct RatioBounds {
  int num_used = 0;
  double lo = 0.0;
  double hi = std::numeric_limits<double>::infinity();
  std::string lo_where, hi_where;  // which row set each bound (for messages)
  bool inconsistent = false;
};

std::string row_where(const NcclTestsRow& row) {
  return row.line > 0 ? "line " + std::to_string(row.line) : "results[" + std::to_string(row.index) + "]";
}

// The interval of busbw/algbw factors compatible with every printed row, given the rounding
// of the printed digits: factor in [(b - tb) / (a + ta), (b + tb) / (a - ta)].
RatioBounds ratio_bounds(const std::vector<NcclTestsRow>& rows) {
  RatioBounds r;
  for (const auto& row : rows) {
    for (const NcclTestsHalf* h : {&row.out_of_place, &row.in_place}) {
      if (!h->algbw_gbps || !h->busbw_gbps) continue;
      const double a = *h->algbw_gbps, b = *h->busbw_gbps;
      const double ta = h->algbw_tolerance_gbps, tb = h->busbw_tolerance_gbps;
      if (!std::isfinite(a) || !std::isfinite(b) || a - ta <= 0.0) continue;
      const double lo = std::max(0.0, b - tb) / (a + ta) * (1.0 - 1e-12);
      const double hi = (b + tb) / (a - ta) * (1.0 + 1e-12);
      ++r.num_used;
      if (lo > r.lo) {
        r.lo = lo;
        r.lo_where = row_where(row);
      }
      if (hi < r.hi) {
        r.hi = hi;
        r.hi_where = row_where(row);
      }
    }
  }
  r.inconsistent = r.num_used > 0 && r.lo > r.hi;
  return r;
}

struct IntRange {
  long lo = 1;
  long hi = 0;  // lo > hi: empty
  bool unbounded = false;
};

constexpr long kMaxRanks = 10'000'000;

// Rank counts n whose factor lies in [flo, fhi].
IntRange ranks_for_factor(FactorKind kind, double flo, double fhi) {
  const double limit = kind == FactorKind::two_n_minus_1_over_n ? 2.0 : 1.0;
  auto inverse = [&](double f) { return limit / (limit - f); };  // n from the factor
  IntRange r;
  const double nlo = flo >= limit ? static_cast<double>(kMaxRanks) + 1 : inverse(flo);
  r.lo = std::max(1L, static_cast<long>(std::ceil(nlo - 1e-9)));
  if (fhi >= limit || inverse(fhi) > static_cast<double>(kMaxRanks)) {
    r.unbounded = true;
    r.hi = kMaxRanks;
  } else {
    r.hi = static_cast<long>(std::floor(inverse(fhi) + 1e-9));
  }
  return r;
}

struct RankEvidence {
  std::optional<int> listed;  // a complete list gives the count
  std::string listed_source;
  int at_least = 0;                // ranks seen in an incomplete list
  std::optional<int> per_process;  // nThread x nGpus: n is a multiple of it
  std::optional<int> nccl_info;    // "NCCL INFO ... nranks N"
  std::string incomplete_reason;   // why the list does not give the count
};

std::string range_text(long lo, long hi, bool unbounded) {
  if (unbounded) return std::to_string(lo) + " or more";
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + ".." + std::to_string(hi);
}

void resolve_num_ranks(NcclTestsLog& log, const RankEvidence& ev) {
  const auto kind = factor_kind(log.collective);
  const RatioBounds bounds = ratio_bounds(log.rows);
  const bool ratio_informative = kind && *kind != FactorKind::one && bounds.num_used > 0 && !bounds.inconsistent;

  if (bounds.inconsistent) {
    log.warnings.push_back("the busbw/algbw ratios of the rows disagree beyond the printed rounding (" +
                           bounds.lo_where + " vs " + bounds.hi_where +
                           "); the log may have been edited or mixes runs");
  }

  const int pp = ev.per_process.value_or(1) > 0 ? ev.per_process.value_or(1) : 1;
  auto check_against_ratio = [&](int n, const std::string& source) {
    if (!ratio_informative) return;
    const double f = factor_value(*kind, n);
    if (f < bounds.lo || f > bounds.hi) {
      const IntRange fit = ranks_for_factor(*kind, bounds.lo, bounds.hi);
      log.warnings.push_back(
          "the " + source + " gives " + std::to_string(n) + " ranks, but the busbw/algbw ratio fits " +
          (fit.lo > fit.hi ? std::string("no rank count") : range_text(fit.lo, fit.hi, fit.unbounded)) + " (factor " +
          std::string(factor_text(*kind)) + ")");
    }
  };

  if (ev.listed) {
    log.num_ranks = ev.listed;
    log.num_ranks_source = ev.listed_source;
    check_against_ratio(*ev.listed, ev.listed_source);
    return;
  }
  if (ev.nccl_info && *ev.nccl_info >= ev.at_least) {
    log.num_ranks = ev.nccl_info;
    log.num_ranks_source = "NCCL INFO nranks";
    log.warnings.push_back("rank count " + std::to_string(*ev.nccl_info) + " taken from the NCCL INFO 'nranks' line" +
                           (ev.incomplete_reason.empty() ? "" : " because " + ev.incomplete_reason));
    check_against_ratio(*ev.nccl_info, "NCCL INFO nranks line");
    return;
  }

  const std::string why = ev.incomplete_reason.empty() ? "the device list is incomplete" : ev.incomplete_reason;
  const int at_least = std::max(ev.at_least, ev.per_process.value_or(0));
  if (at_least > 0) log.num_ranks_at_least = at_least;
  const std::string bound_text = at_least > 0 ? " (at least " + std::to_string(at_least) + " ranks seen)" : "";

  if (!kind) {
    log.warnings.push_back("could not recover the rank count: " + why +
                           " and the collective is unknown, so the busbw/algbw ratio cannot be read" + bound_text);
    return;
  }
  if (*kind == FactorKind::one) {
    log.warnings.push_back("could not recover the rank count: " + why + ", and busbw = algbw for " + log.collective +
                           ", so the busbw/algbw ratio carries no rank count" + bound_text);
    return;
  }
  if (bounds.num_used == 0) {
    log.warnings.push_back("could not recover the rank count: " + why +
                           ", and no row has an algbw large enough to read the busbw/algbw ratio" + bound_text);
    return;
  }
  if (bounds.inconsistent) {
    log.warnings.push_back("could not recover the rank count: " + why + ", and the busbw/algbw ratios disagree" +
                           bound_text);
    return;
  }
  const IntRange fit = ranks_for_factor(*kind, bounds.lo, bounds.hi);
  // Apply what is known: at least the ranks seen, and a multiple of nThread x nGpus.
  const long lo = std::max<long>(fit.lo, at_least > 0 ? at_least : 1);
  const long first = (lo + pp - 1) / pp * pp;
  const std::string constraint = pp > 1 ? ", multiple of nThread x nGpus = " + std::to_string(pp) : "";
  if (fit.lo > fit.hi || first > fit.hi) {
    log.warnings.push_back("could not recover the rank count: " + why + ", and no rank count" +
                           (at_least > 0 ? " >= " + std::to_string(at_least) : std::string()) + constraint +
                           " fits the busbw/algbw ratio (factor " + std::string(factor_text(*kind)) + " in [" +
                           std::to_string(bounds.lo) + ", " + std::to_string(bounds.hi) + "])");
    return;
  }
  if (!fit.unbounded && first + pp > fit.hi) {
    log.num_ranks = static_cast<int>(first);
    log.num_ranks_source = "busbw/algbw ratio";
    log.warnings.push_back("rank count " + std::to_string(first) + " recovered from the busbw/algbw ratio (factor " +
                           std::string(factor_text(*kind)) + " for " + log.collective + ", over " +
                           std::to_string(bounds.num_used) + " measurements" + constraint + ") because " + why);
    return;
  }
  log.num_ranks_at_least = static_cast<int>(first);
  log.warnings.push_back("could not recover the rank count: " + why + ", and the busbw/algbw ratio (factor " +
                         std::string(factor_text(*kind)) + ") fits " + range_text(first, fit.hi, fit.unbounded) +
                         " ranks" + constraint + "; the printed digits are too few to tell");
}

// Rows whose printed busbw is not algbw x factor(n) within rounding: hand edits, mixed runs.
void check_busbw(NcclTestsLog& log) {
  if (!log.num_ranks || !factor_kind(log.collective)) return;
  const double f = nccl_tests_busbw_factor(log.collective, *log.num_ranks);
  int bad = 0;
  std::string first;
  for (const auto& row : log.rows)
    for (const NcclTestsHalf* h : {&row.out_of_place, &row.in_place})
      if (!nccl_tests_busbw_consistent(*h, f)) {
        if (bad++ == 0) first = row_where(row);
      }
  if (bad > 0)
    log.warnings.push_back(std::to_string(bad) + " measurement(s) print a busbw that is not algbw x " +
                           std::to_string(f) + " within rounding (first at " + first + ")");
}

// nccl-tests averages the unrounded busbw of every printed measurement.
void check_avg_busbw(NcclTestsLog& log) {
  if (!log.avg_busbw || !std::isfinite(*log.avg_busbw)) return;
  double sum = 0.0, tol = 0.0;
  int n = 0;
  for (const auto& row : log.rows)
    for (const NcclTestsHalf* h : {&row.out_of_place, &row.in_place})
      if (h->busbw_gbps && std::isfinite(*h->busbw_gbps)) {
        sum += *h->busbw_gbps;
        tol += h->busbw_tolerance_gbps;
        ++n;
      }
  if (n == 0) return;
  const double mean = sum / n;
  // %g prints 6 significant digits.
  const double allowed = tol / n + std::abs(*log.avg_busbw) * 5e-6 + 1e-9;
  if (std::abs(mean - *log.avg_busbw) > allowed) {
    std::ostringstream msg;
    msg << "the log's average bus bandwidth " << *log.avg_busbw << " differs from the mean of the " << n
        << " busbw values read (" << mean << "): rows may be missing or edited";
    log.warnings.push_back(msg.str());
  }
}

// Collective from the rows alone, only where the numbers leave one answer.
void infer_collective_from_rows(NcclTestsLog& log) {
  const RatioBounds b = ratio_bounds(log.rows);
  if (b.num_used == 0 || b.inconsistent) {
    log.warnings.push_back("could not tell which collective this is (no program name, file name or usable ratio)");
    return;
  }
  bool reduction = false;
  for (const auto& row : log.rows)
    if (!row.redop.empty() && row.redop != "none") reduction = true;
  if (b.lo > 1.0) {
    log.collective = "allreduce";
    log.collective_source = "busbw/algbw ratio above 1";
  } else if (b.hi < 1.0 && reduction) {
    log.collective = "reducescatter";
    log.collective_source = "busbw/algbw ratio below 1 with a reduction";
  } else {
    log.warnings.push_back(
        "could not tell which collective this is: the busbw/algbw ratio fits several (allgather, alltoall, "
        "broadcast, ...); name the file after the nccl-tests binary (e.g. all_gather_perf.log)");
    return;
  }
  log.warnings.push_back("collective '" + log.collective + "' inferred from the " + log.collective_source);
}

void infer_collective_from_path(NcclTestsLog& log) {
  std::string base = log.source_path;
  const std::size_t slash = base.find_last_of("/\\");
  if (slash != std::string::npos) base = base.substr(slash + 1);
  const std::string s = squash(base);
  for (const auto& c : kCollectives) {
    if (s.find(c.name) != std::string::npos) {
      log.collective = std::string(c.name);
      log.collective_source = "file name";
      log.warnings.push_back("collective '" + log.collective + "' inferred from the file name " + in_quotes(base));
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Console logs

enum class Col {
  size,
  count,
  type,
  redop,
  root,
  time,
  algbw,
  busbw,
  wrong,
  max_error,
  i_min,
  i_max,
  i_p99,
  i_cv,
  timestamp
};

struct Column {
  Col kind;
  int half;  // 0 out-of-place, 1 in-place, -1 neither
  std::string label;
};

struct Layout {
  std::vector<Column> cols;
  std::size_t num_fields = 0;  // a timestamp column takes two whitespace-separated fields
  bool legacy_ms = false;      // 2017 layout ("bytes N type op"): times in ms
  int line = 0;                // the header line, 0 when inferred
  std::string text;            // the labels, for messages
};

bool is_metric(Col c) {
  return c == Col::time || c == Col::algbw || c == Col::busbw || c == Col::wrong || c == Col::max_error ||
         c == Col::i_min || c == Col::i_max || c == Col::i_p99 || c == Col::i_cv;
}

std::optional<Col> column_for_label(std::string_view label, bool& legacy) {
  const std::string l = lower(label);
  if (l == "size") return Col::size;
  if (l == "bytes") {
    legacy = true;
    return Col::size;
  }
  if (l == "count" || l == "elements") return Col::count;
  if (l == "n") {
    legacy = true;
    return Col::count;
  }
  if (l == "type" || l == "dtype" || l == "datatype") return Col::type;
  if (l == "redop" || l == "op" || l == "reduction") return Col::redop;
  if (l == "root") return Col::root;
  if (l == "time" || l == "cputime" || l == "cpu_time") return Col::time;
  if (l == "algbw" || l == "alg_bw") return Col::algbw;
  if (l == "busbw" || l == "bus_bw") return Col::busbw;
  if (l == "#wrong" || l == "wrong" || l == "#errors" || l == "errors" || l == "nwrong") return Col::wrong;
  if (l == "error" || l == "res" || l == "err") return Col::max_error;
  if (l == "i_min") return Col::i_min;
  if (l == "i_max") return Col::i_max;
  if (l == "i_p99") return Col::i_p99;
  if (l == "i_cv%" || l == "i_cv") return Col::i_cv;
  if (l == "timestamp") return Col::timestamp;
  return std::nullopt;
}

std::vector<std::string> header_labels(std::string_view comment) {
  std::vector<std::string> labels;
  for (auto tok : split_ws(comment)) {
    // A retyped "# wrong" splits #wrong in two; a stray "#" joins the next label.
    if (tok == "#") {
      labels.emplace_back("#");
      continue;
    }
    if (!labels.empty() && labels.back() == "#") {
      labels.back() += std::string(tok);
      continue;
    }
    labels.emplace_back(tok);
  }
  if (!labels.empty() && labels.back() == "#") labels.pop_back();
  return labels;
}

bool looks_like_table_header(std::string_view comment) {
  bool size = false, algbw = false, busbw = false;
  for (const auto& l : header_labels(comment)) {
    const std::string s = lower(l);
    if (s == "size" || s == "bytes") size = true;
    if (s == "algbw") algbw = true;
    if (s == "busbw") busbw = true;
  }
  return size && algbw && busbw;
}

Layout parse_header_layout(std::string_view comment, std::string_view group_text, int line, const std::string& path) {
  Layout layout;
  layout.line = line;
  int half = -1;
  std::set<std::pair<int, int>> seen;
  for (const auto& label : header_labels(comment)) {
    bool legacy = false;
    const auto col = column_for_label(label, legacy);
    if (!col) {
      fail(path, line,
           "unknown column " + in_quotes(label) +
               " in the nccl-tests table header; known: size count type redop root time algbw busbw #wrong "
               "i_min i_max i_p99 i_cv% timestamp (and the older bytes N op error res)");
    }
    layout.legacy_ms = layout.legacy_ms || legacy;
    int h = -1;
    if (*col == Col::time) {
      ++half;
      if (half > 1) fail(path, line, "the table header has more than two 'time' columns (out-of-place, in-place)");
    }
    if (is_metric(*col)) h = std::max(half, 0);
    if (!seen.insert({static_cast<int>(*col), h}).second)
      fail(path, line, "column " + in_quotes(label) + " appears twice in the table header");
    layout.cols.push_back({*col, h, label});
    layout.num_fields += *col == Col::timestamp ? 2 : 1;
  }
  // One measurement group: in-place only if the group line says so.
  if (half <= 0) {
    const std::string g = lower(group_text);
    if (g.find("in-place") != std::string::npos && g.find("out-of-place") == std::string::npos)
      for (auto& c : layout.cols)
        if (c.half == 0) c.half = 1;
  }
  auto has = [&](Col c, int h) {
    return std::any_of(layout.cols.begin(), layout.cols.end(),
                       [&](const Column& x) { return x.kind == c && x.half == h; });
  };
  for (Col c : {Col::size, Col::count, Col::type})
    if (!has(c, -1))
      fail(path, line,
           std::string("the table header lacks the ") +
               (c == Col::size    ? "'size'"
                : c == Col::count ? "'count'"
                                  : "'type'") +
               " column");
  for (int h = 0; h <= 1; ++h) {
    const bool any = std::any_of(layout.cols.begin(), layout.cols.end(), [&](const Column& x) { return x.half == h; });
    if (!any) continue;
    for (Col c : {Col::time, Col::algbw, Col::busbw})
      if (!has(c, h))
        fail(path, line,
             std::string("the ") + (h == 0 ? "out-of-place" : "in-place") + " group of the table header lacks '" +
                 (c == Col::time    ? "time"
                  : c == Col::algbw ? "algbw"
                                    : "busbw") +
                 "'");
  }
  for (std::size_t i = 0; i < layout.cols.size(); ++i) layout.text += (i ? " " : "") + layout.cols[i].label;
  return layout;
}

bool is_date(std::string_view s) {
  return std::regex_match(s.begin(), s.end(), std::regex(R"(\d{4}-\d{2}-\d{2})"));
}
bool is_clock(std::string_view s) {
  return std::regex_match(s.begin(), s.end(), std::regex(R"(\d{2}:\d{2}:\d{2})"));
}

bool is_integer_token(std::string_view s) {
  return to_long(s).has_value();
}

// A layout guessed from one data row when the log lost its table header.
std::optional<Layout> infer_layout(const std::vector<std::string_view>& t) {
  std::size_t n = t.size();
  if (n < 7 || !all_digits(t[0]) || !all_digits(t[1]) || !starts_alpha(t[2])) return std::nullopt;
  Layout layout;
  layout.cols = {{Col::size, -1, "size"}, {Col::count, -1, "count"}, {Col::type, -1, "type"}};
  bool timestamp = false;
  if (n >= 2 && is_date(t[n - 2]) && is_clock(t[n - 1])) {
    timestamp = true;
    n -= 2;
  }
  std::size_t i = 3;
  if (i < n && starts_alpha(t[i]) && !to_double(t[i])) {
    layout.cols.push_back({Col::redop, -1, "redop"});
    ++i;
  }
  std::size_t rest = n - i;
  if ((rest == 9 || rest == 5 || rest == 17) && is_integer_token(t[i])) {
    layout.cols.push_back({Col::root, -1, "root"});
    ++i;
    --rest;
  }
  if (rest != 4 && rest != 8 && rest != 16) return std::nullopt;
  const bool per_iter = rest == 16;
  const std::size_t halves = rest == 4 ? 1 : 2;
  for (std::size_t h = 0; h < halves; ++h) {
    const int hi = static_cast<int>(h);
    const std::size_t base = i + h * (per_iter ? 8 : 4);
    const std::string_view err = t[base + 3];
    const bool max_error = err.find_first_of(".eE") != std::string_view::npos && err != "N/A";
    layout.cols.push_back({Col::time, hi, "time"});
    layout.cols.push_back({Col::algbw, hi, "algbw"});
    layout.cols.push_back({Col::busbw, hi, "busbw"});
    layout.cols.push_back({max_error ? Col::max_error : Col::wrong, hi, max_error ? "error" : "#wrong"});
    if (per_iter) {
      layout.cols.push_back({Col::i_min, hi, "i_min"});
      layout.cols.push_back({Col::i_max, hi, "i_max"});
      layout.cols.push_back({Col::i_p99, hi, "i_p99"});
      layout.cols.push_back({Col::i_cv, hi, "i_cv%"});
    }
  }
  if (timestamp) layout.cols.push_back({Col::timestamp, -1, "timestamp"});
  for (const auto& c : layout.cols) layout.num_fields += c.kind == Col::timestamp ? 2 : 1;
  for (std::size_t k = 0; k < layout.cols.size(); ++k) layout.text += (k ? " " : "") + layout.cols[k].label;
  return layout;
}

// Launcher prefixes seen in front of nccl-tests output.
const std::vector<std::regex>& launcher_prefixes() {
  static const std::vector<std::regex> prefixes = {
      std::regex(R"(^\s*\[\d+,\d+\]<\w+>:\s*)"),  // mpirun --tag-output
      std::regex(R"(^\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s+)"),  // timestamps
      std::regex(R"(^\s*\d+:\s*)"),                                                                       // srun -l
      std::regex(R"(^\s*\[\d+\]\s*)"),           // Intel MPI -prepend-rank
      std::regex(R"(^\s*[A-Za-z][\w.-]*:\s+)"),  // pdsh "host: "
  };
  return prefixes;
}

// The launcher prefix of the table header line, as a pattern for the data rows that follow
// (digit runs may change from line to line, the rest may not).
std::optional<std::regex> prefix_shape(std::string_view prefix) {
  prefix = trim(prefix);
  if (prefix.empty()) return std::nullopt;
  std::string pattern = R"(^\s*)";
  for (std::size_t i = 0; i < prefix.size();) {
    const char c = prefix[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < prefix.size() && std::isdigit(static_cast<unsigned char>(prefix[i]))) ++i;
      pattern += R"(\d+)";
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      while (i < prefix.size() && std::isspace(static_cast<unsigned char>(prefix[i]))) ++i;
      pattern += R"(\s*)";
    } else {
      if (std::string_view(R"(\^$.|?*+()[]{})").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
      ++i;
    }
  }
  pattern += R"(\s*)";
  return std::regex(pattern);
}

struct Line {
  int number = 0;
  std::string_view text;
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t start = 0;
  int number = 1;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back({number++, l});
    start = end + 1;
  }
  return lines;
}

struct Section {
  NcclTestsLog log;
  std::optional<Layout> layout;
  std::string group_text;
  bool units_ms = false, units_us = false;
  bool table_ended = false;
  int footer_line = 0;
  bool using_devices = false;  // "# Using devices" seen
  bool devices_cut = false;
  int devices_cut_line = 0;
  int rows_cut_line = 0;
  std::vector<int> noise_lines;
  std::optional<std::string> library_version, info_version, compiled_version;
  std::optional<int> info_nranks;
  bool inferred_warned = false, ms_warned = false;
  int header_nthread_line = 0;

  [[nodiscard]] bool has_rows() const { return !log.rows.empty(); }
};

class TextParser {
 public:
  TextParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  std::vector<NcclTestsLog> run() {
    const auto lines = split_lines(text_);
    last_nonempty_ = 0;
    for (const auto& l : lines)
      if (!trim(l.text).empty()) last_nonempty_ = l.number;
    ends_with_newline_ = !text_.empty() && text_.back() == '\n';
    sections_.emplace_back();
    for (const auto& l : lines) handle(l);
    std::vector<NcclTestsLog> out;
    for (auto& s : sections_) {
      if (!s.layout && !s.has_rows()) continue;
      out.push_back(finish(s, sections_.size()));
    }
    if (out.empty()) {
      fail(path_, 0,
           "no nccl-tests result table found in " + std::to_string(lines.size()) +
               " lines (expected a '#  size  count  type ...  algbw  busbw ...' header followed by data rows)");
    }
    return out;
  }

 private:
  Section& cur() { return sections_.back(); }

  void new_section_if_rows(int line) {
    if (cur().has_rows()) {
      sections_.emplace_back();
      cur().log.first_line = line;
      if (!pending_program_.empty()) {
        cur().log.program = pending_program_;
        pending_program_.clear();
      }
    }
  }

  void note(int line) {
    if (cur().log.first_line == 0) cur().log.first_line = line;
    cur().log.last_line = std::max(cur().log.last_line, line);
  }

  void handle(const Line& l) {
    const std::string_view raw = l.text;
    if (trim(raw).empty()) return;
    const std::size_t hash = raw.find('#');
    const bool comment = hash != std::string_view::npos;
    const std::string_view body = comment ? raw.substr(hash + 1) : raw;
    std::match_results<std::string_view::const_iterator> m;
    auto search = [&](const std::regex& re, std::string_view s) {
      return std::regex_search(s.begin(), s.end(), m, re);
    };

    static const std::regex re_start(R"(Collective test starting:\s*(\S+))");
    static const std::regex re_end(R"(Collective test concluded:\s*(\S+))");
    static const std::regex re_version(R"(nccl-tests version\s+(\S+))");
    static const std::regex re_library(R"(nccl-library=(\d+))");
    static const std::regex re_compiled(R"(NCCL Tests compiled with NCCL\s+(\S+))");
    static const std::regex re_info_version(R"(NCCL version\s+(\S+))");
    static const std::regex re_info_nranks(R"(\bn[Rr]anks\s+(\d+))");
    static const std::regex re_nthread(R"(\bnThread\s+\d+)");
    static const std::regex re_oob(R"(Out of bounds values\s*:\s*(\d+))");
    static const std::regex re_avg(R"(Avg bus bandwidth\s*:\s*(\S+))");
    static const std::regex re_rank(R"(^\s*Rank\s+\d+)");
    static const std::regex re_reduced(R"(Reducing maxBytes to\s+(\d+))");
    static const std::regex re_program(R"(\b([a-z][a-z_]*_perf)\w*)");

    auto has = [&](std::string_view needle) { return raw.find(needle) != std::string_view::npos; };
    // Substring checks first: logs with NCCL_DEBUG=INFO from many ranks run to millions of lines.
    if (has("Collective test starting") && search(re_start, raw)) {
      new_section_if_rows(l.number);
      note(l.number);
      cur().log.program = m[1].str();
      return;
    }
    if (has("Collective test concluded") && search(re_end, raw)) {
      note(l.number);
      if (cur().log.program.empty()) cur().log.program = m[1].str();
      cur().table_ended = true;
      return;
    }
    if (has("nccl-tests version") && search(re_version, raw)) {
      new_section_if_rows(l.number);
      note(l.number);
      cur().log.nccl_tests_version = m[1].str();
      const std::string rest(raw);
      std::smatch lib;
      if (std::regex_search(rest, lib, re_library))
        cur().library_version = nccl_version_string(to_long(lib[1].str()).value_or(0));
      return;
    }
    if (has("NCCL Tests compiled") && search(re_compiled, raw)) {
      note(l.number);
      cur().compiled_version = m[1].str();
      return;
    }
    if (raw.find("NCCL INFO") != std::string_view::npos) {
      if (!cur().info_version && has("NCCL version") && search(re_info_version, raw)) cur().info_version = m[1].str();
      if ((has("nranks") || has("nRanks")) && search(re_info_nranks, raw)) {
        const int n = static_cast<int>(to_long(m[1].str()).value_or(0));
        cur().info_nranks = std::max(cur().info_nranks.value_or(0), n);
      }
      note_noise(l);
      return;
    }
    if (has("nThread") && search(re_nthread, raw)) {
      new_section_if_rows(l.number);
      note(l.number);
      parse_run_parameters(raw.substr(static_cast<std::size_t>(m.position(0))));
      return;
    }
    if (has("Out of bounds") && search(re_oob, raw)) {
      note(l.number);
      cur().log.out_of_bounds = to_long(m[1].str());
      end_table(l.number);
      return;
    }
    if (has("Avg bus bandwidth") && search(re_avg, raw)) {
      note(l.number);
      const std::string v = m[1].str();
      cur().log.avg_busbw = to_double(v);
      if (!cur().log.avg_busbw)
        cur().log.warnings.push_back(at(path_, l.number) + "unreadable average bus bandwidth " + in_quotes(v));
      end_table(l.number);
      return;
    }
    if (comment && has("Rank") && search(re_rank, body)) {
      note(l.number);
      parse_device(body, l.number);
      return;
    }
    if (comment) {
      if (looks_like_table_header(body)) {
        new_section_if_rows(l.number);
        if (cur().layout)
          fail(
              path_, l.number,
              "a second table header, but the one at line " + std::to_string(cur().layout->line) + " has no data rows");
        note(l.number);
        cur().layout = parse_header_layout(body, cur().group_text, l.number, path_);
        shape_ = prefix_shape(raw.substr(0, hash));
        return;
      }
      const std::string lb = lower(body);
      if (lb.find("out-of-place") != std::string::npos || lb.find("in-place") != std::string::npos) {
        cur().group_text = std::string(body);
        return;
      }
      if (lb.find("(us)") != std::string::npos || lb.find("(ms)") != std::string::npos ||
          lb.find("(gb/s)") != std::string::npos || lb.find("(b)") != std::string::npos) {
        if (lb.find("(ms)") != std::string::npos) cur().units_ms = true;
        if (lb.find("(us)") != std::string::npos) cur().units_us = true;
        return;
      }
      if (is_ellipsis(body)) {
        mark_cut(l.number);
        return;
      }
      if (lb.find("using devices") != std::string::npos) {
        cur().using_devices = true;
        return;
      }
      if (has("Reducing maxBytes") && search(re_reduced, body)) {
        cur().log.header["maxBytes"] = m[1].str();
        cur().log.warnings.push_back(at(path_, l.number) + "nccl-tests reduced maxBytes to " + m[1].str() +
                                     " for lack of GPU memory");
        return;
      }
      const std::string_view tb = trim(body);
      if (tb.substr(0, 6) == "error:") cur().log.errors.emplace_back(trim(tb.substr(6)));
      return;
    }
    if (is_ellipsis(raw)) {
      mark_cut(l.number);
      return;
    }
    handle_candidate_row(l);
    if ((!cur().layout || cur().table_ended) && has("_perf") && search(re_program, raw)) {
      const std::string program = m[1].str();
      if (!nccl_tests_collective_name(program).empty()) {
        if (cur().has_rows())
          pending_program_ = program;
        else if (cur().log.program.empty())
          cur().log.program = program;
      }
    }
  }

  void note_noise(const Line& l) {
    if (cur().layout && !cur().table_ended) cur().noise_lines.push_back(l.number);
  }

  void end_table(int line) {
    if (!cur().table_ended) cur().footer_line = line;
    cur().table_ended = true;
  }

  void mark_cut(int line) {
    if (!cur().layout) {
      if (!cur().using_devices && cur().log.devices.empty()) return;  // launcher output, not the list
      cur().devices_cut = true;
      if (cur().devices_cut_line == 0) cur().devices_cut_line = line;
    } else if (!cur().table_ended && cur().rows_cut_line == 0) {
      cur().rows_cut_line = line;
    }
  }

  void parse_run_parameters(std::string_view s) {
    std::string key;
    for (auto tok : split_ws(s)) {
      if (tok == "#") continue;
      const char c = tok[0];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
        if (!key.empty()) cur().log.header[key] = std::string(tok);
        key.clear();
      } else {
        std::string word(tok);
        if (!word.empty() && word.back() == ':') word.pop_back();
        if (!key.empty()) key += ' ';
        key += word;
      }
    }
  }

  void parse_device(std::string_view body, int line) {
    static const std::regex re(
        R"(^\s*Rank\s+(\d+)(?:\s+Group\s+(\d+))?(?:\s+Pid\s+(\d+))?\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)");
    static const std::regex re_rank_only(R"(^\s*Rank\s+(\d+))");
    std::match_results<std::string_view::const_iterator> m;
    NcclTestsDevice d;
    d.line = line;
    const bool cut = trim(body).size() >= 3 && trim(body).substr(trim(body).size() - 3) == "...";
    if (std::regex_search(body.begin(), body.end(), m, re)) {
      d.rank = static_cast<int>(to_long(m[1].str()).value_or(0));
      if (m[2].matched) d.group = static_cast<int>(to_long(m[2].str()).value_or(0));
      if (m[3].matched) d.pid = to_long(m[3].str());
      d.host = m[4].str();
      d.device = static_cast<int>(to_long(m[5].str()).value_or(0));
      d.bus_id = m[6].str();
      d.name = std::string(trim(m[7].str()));
      if (cut && d.name.size() >= 3) d.name = std::string(trim(std::string_view(d.name).substr(0, d.name.size() - 3)));
    } else if (std::regex_search(body.begin(), body.end(), m, re_rank_only)) {
      d.rank = static_cast<int>(to_long(m[1].str()).value_or(0));
      cur().log.warnings.push_back(at(path_, line) + "device line only partly readable: " + in_quotes(trim(body)));
    }
    if (cut) {
      cur().devices_cut = true;
      if (cur().devices_cut_line == 0) cur().devices_cut_line = line;
    }
    cur().log.devices.push_back(std::move(d));
  }

  // The row text after any launcher prefix, when the line starts like a data row.
  std::optional<std::string_view> row_body(std::string_view raw) const {
    if (raw.find_first_of("0123456789") == std::string_view::npos) return std::nullopt;
    if (!shape_) {  // the common case: no launcher prefix
      const auto first = split_ws(raw.substr(0, std::min<std::size_t>(raw.size(), 32)));
      if (!first.empty() && all_digits(first[0])) return trim(raw);
    }
    std::string_view s = raw;
    std::match_results<std::string_view::const_iterator> m;
    bool stripped = false;
    if (shape_ && std::regex_search(s.begin(), s.end(), m, *shape_, std::regex_constants::match_continuous)) {
      s.remove_prefix(static_cast<std::size_t>(m.length(0)));
      stripped = true;
    }
    if (!stripped) {
      for (int pass = 0; pass < 3; ++pass) {
        bool any = false;
        for (const auto& re : launcher_prefixes()) {
          if (std::regex_search(s.begin(), s.end(), m, re, std::regex_constants::match_continuous)) {
            s.remove_prefix(static_cast<std::size_t>(m.length(0)));
            any = true;
            break;
          }
        }
        if (!any) break;
      }
    }
    s = trim(s);
    const auto tokens = split_ws(s);
    if (!tokens.empty() && all_digits(tokens[0])) return s;
    // Anything else in front: find a well-formed "size count type" start.
    static const std::regex re_row(R"((?:^|[\s:>\]|])(\d+\s+\d+\s+[A-Za-z]\w*\s.*)$)");
    if (std::regex_search(raw.begin(), raw.end(), m, re_row))
      return trim(std::string_view(&*m[1].first, static_cast<std::size_t>(m.length(1))));
    return std::nullopt;
  }

  void handle_candidate_row(const Line& l) {
    const auto body = row_body(l.text);
    Section& s = cur();
    if (!body) {
      note_noise(l);
      return;
    }
    const auto tokens = split_ws(*body);
    const bool well_formed =
        tokens.size() >= 3 && all_digits(tokens[0]) && all_digits(tokens[1]) && starts_alpha(tokens[2]);
    if (s.table_ended) {
      if (well_formed && s.has_rows())
        fail(path_, l.number,
             "a data row after the table's footer (line " + std::to_string(s.footer_line) +
                 "); a second run without its header lines?");
      return;
    }
    if (!s.layout) {
      if (!well_formed) return;  // launcher output that happens to start with a number
      auto inferred = infer_layout(tokens);
      if (!inferred) return;
      s.layout = std::move(inferred);
      s.log.warnings.push_back(at(path_, l.number) +
                               "no table header before the first data row; columns inferred as: " + s.layout->text);
    }
    note(l.number);
    parse_row(tokens, l.number);
  }

  void parse_row(const std::vector<std::string_view>& tokens, int line) {
    Section& s = cur();
    const Layout& layout = *s.layout;
    const std::string where_header =
        layout.line > 0 ? "the table header (line " + std::to_string(layout.line) + ")" : "the inferred layout";
    if (tokens.size() != layout.num_fields) {
      const bool last_partial = line == last_nonempty_ && !ends_with_newline_ && tokens.size() < layout.num_fields;
      if (last_partial) {
        s.log.warnings.push_back(at(path_, line) + "the last line is cut short (" + std::to_string(tokens.size()) +
                                 " of " + std::to_string(layout.num_fields) + " fields); skipped");
        return;
      }
      fail(path_, line,
           "data row has " + std::to_string(tokens.size()) + " fields but " + where_header + " has " +
               std::to_string(layout.num_fields) + " (" + layout.text + "); " +
               (tokens.size() < layout.num_fields ? "a column is missing" : "there is an extra column"));
    }
    const bool ms = s.units_ms || (layout.legacy_ms && !s.units_us);
    if (ms && !s.ms_warned) {
      s.log.warnings.push_back("times are printed in ms (early nccl-tests layout); converted to us");
      s.ms_warned = true;
    }
    NcclTestsRow row;
    row.line = line;
    row.index = s.log.rows.size();
    std::size_t k = 0;
    for (const auto& col : layout.cols) {
      const std::string_view tok = tokens[k];
      k += col.kind == Col::timestamp ? 2 : 1;
      NcclTestsHalf& h = col.half == 1 ? row.in_place : row.out_of_place;
      const std::string name = in_quotes(col.label) + (col.half == 0   ? " (out-of-place)"
                                                       : col.half == 1 ? " (in-place)"
                                                                       : "");
      auto number = [&](double scale) -> std::optional<double> {
        const auto v = to_double(tok);
        if (!v) fail(path_, line, "column " + name + ": " + in_quotes(tok) + " is not a number");
        if (!std::isfinite(*v)) {
          s.log.warnings.push_back(at(path_, line) + "column " + name + " is " + in_quotes(tok) + "; left empty");
          return std::nullopt;
        }
        return *v * scale;
      };
      switch (col.kind) {
        case Col::size:
        case Col::count: {
          const auto v = to_u64(tok);
          if (!v) fail(path_, line, "column " + name + ": " + in_quotes(tok) + " is not a whole number");
          (col.kind == Col::size ? row.size_bytes : row.count) = *v;
          break;
        }
        case Col::type:
          row.type = std::string(tok);
          break;
        case Col::redop:
          row.redop = std::string(tok);
          break;
        case Col::root: {
          const auto v = to_long(tok);
          if (!v) fail(path_, line, "column " + name + ": " + in_quotes(tok) + " is not an integer");
          row.root = *v;
          break;
        }
        case Col::time:
          h.time_us = number(ms ? 1000.0 : 1.0);
          h.time_tolerance_us = printed_tolerance(tok) * (ms ? 1000.0 : 1.0);
          break;
        case Col::algbw:
          h.algbw_gbps = number(1.0);
          h.algbw_tolerance_gbps = printed_tolerance(tok);
          break;
        case Col::busbw:
          h.busbw_gbps = number(1.0);
          h.busbw_tolerance_gbps = printed_tolerance(tok);
          break;
        case Col::wrong: {
          if (tok == "N/A" || tok == "n/a") break;
          const auto v = to_double(tok);  // %g: "0", "12", "1e+06"
          if (!v || *v < 0 || *v != std::floor(*v) || *v > 1.8e19)
            fail(path_, line, "column " + name + ": " + in_quotes(tok) + " is not a count of wrong elements (or N/A)");
          h.wrong = static_cast<std::uint64_t>(*v);
          break;
        }
        case Col::max_error:
          if (tok == "N/A" || tok == "n/a") break;
          h.max_error = number(1.0);
          break;
        case Col::i_min:
        case Col::i_max:
        case Col::i_p99:
        case Col::i_cv: {
          if (!h.per_iteration) h.per_iteration.emplace();
          const auto v = number(1.0);
          auto& pi = *h.per_iteration;
          (col.kind == Col::i_min   ? pi.min_us
           : col.kind == Col::i_max ? pi.max_us
           : col.kind == Col::i_p99 ? pi.p99_us
                                    : pi.cv_pct) = v;
          break;
        }
        case Col::timestamp:
          break;
      }
    }
    s.log.rows.push_back(std::move(row));
  }

  NcclTestsLog finish(Section& s, std::size_t num_sections) {
    NcclTestsLog& log = s.log;
    log.format = "text";
    log.source_path = path_;
    if (log.rows.empty()) fail(path_, s.layout ? s.layout->line : 0, "the table header has no data rows after it");
    if (s.layout && s.layout->cols.size() > 0)
      for (const auto& c : s.layout->cols)
        if (c.kind == Col::time && (lower(c.label) == "cputime" || lower(c.label) == "cpu_time")) log.cpu_time = true;
    if (log.cpu_time) log.warnings.push_back("times are CPU times (nccl-tests -C), not GPU times");

    // Versions: the library code nccl-tests printed, else NCCL's own INFO line, else the
    // version the tests were compiled against.
    if (s.library_version)
      log.nccl_version = s.library_version;
    else if (s.info_version)
      log.nccl_version = s.info_version;
    else if (s.compiled_version)
      log.nccl_version = s.compiled_version;

    if (!s.noise_lines.empty())
      log.warnings.push_back(std::to_string(s.noise_lines.size()) +
                             " line(s) inside the table are not nccl-tests output and were skipped (first at line " +
                             std::to_string(s.noise_lines.front()) + ")");
    if (s.rows_cut_line > 0) log.warnings.push_back(at(path_, s.rows_cut_line) + "rows of the table were cut ('...')");
    if (!s.table_ended)
      log.warnings.push_back("no 'Avg bus bandwidth' footer after the table: the log may be cut short");

    // Collective.
    if (!log.program.empty()) {
      log.collective = nccl_tests_collective_name(log.program);
      log.collective_source = "program name";
      if (log.collective.empty())
        log.warnings.push_back("unknown nccl-tests program " + in_quotes(log.program) + "; collective not set");
    }
    if (log.collective.empty() && num_sections == 1) infer_collective_from_path(log);
    if (log.collective.empty()) infer_collective_from_rows(log);

    // Ranks.
    RankEvidence ev;
    std::set<int> ranks;
    bool duplicates = false;
    for (const auto& d : log.devices) duplicates = !ranks.insert(d.rank).second || duplicates;
    const auto pp_value = [&]() -> std::optional<int> {
      const auto t = log.header.find("nThread");
      const auto g = log.header.find("nGpus");
      if (t == log.header.end() || g == log.header.end()) return std::nullopt;
      const auto tv = to_long(t->second), gv = to_long(g->second);
      if (!tv || !gv || *tv < 1 || *gv < 1) return std::nullopt;
      return static_cast<int>(*tv * *gv);
    }();
    ev.per_process = pp_value;
    ev.nccl_info = s.info_nranks;
    const bool contiguous =
        !ranks.empty() && *ranks.begin() == 0 && *ranks.rbegin() == static_cast<int>(ranks.size()) - 1;
    log.devices_complete = !log.devices.empty() && !s.devices_cut && contiguous && !duplicates;
    if (log.devices_complete) {
      ev.listed = static_cast<int>(ranks.size());
      ev.listed_source = "devices list";
      if (pp_value && *ev.listed % *pp_value != 0)
        log.warnings.push_back("the device list has " + std::to_string(*ev.listed) +
                               " ranks, not a multiple of nThread x nGpus = " + std::to_string(*pp_value));
    } else {
      ev.at_least = ranks.empty() ? 0 : *ranks.rbegin() + 1;
      if (log.devices.empty())
        ev.incomplete_reason = "the log has no device list";
      else if (s.devices_cut)
        ev.incomplete_reason = "the device list is cut ('...' at line " + std::to_string(s.devices_cut_line) + ")";
      else if (duplicates)
        ev.incomplete_reason = "the device list names some ranks twice";
      else
        ev.incomplete_reason = "the device list skips ranks";
    }
    resolve_num_ranks(log, ev);
    check_busbw(log);
    check_avg_busbw(log);
    return std::move(log);
  }

  std::string_view text_;
  std::string path_;
  std::vector<Section> sections_;
  std::optional<std::regex> shape_;
  std::string pending_program_;
  int last_nonempty_ = 0;
  bool ends_with_newline_ = false;
};

// ---------------------------------------------------------------------------------------------
// -J JSON (nccl-tests src/util.cu; JSON file versions 1 to 3)

constexpr double kJsonTolerance = 5e-7;  // doubles are printed with "%lf": 6 decimals

class JsonReader {
 public:
  JsonReader(const std::string& path, NcclTestsLog& log) : path_(path), log_(log) {}

  [[noreturn]] void bad(const std::string& where, const std::string& what) const {
    throw InputError(path_ + ": " + where + ": " + what);
  }

  // Numbers; "nan" strings (what nccl-tests writes for NaN) and null give nullopt.
  std::optional<double> number(const Json& obj, const std::string& key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) {
      const auto v = to_double(it->get<std::string>());
      if (v && !std::isfinite(*v)) {
        log_.warnings.push_back(where + "." + key + " is " + in_quotes(it->get<std::string>()) + "; left empty");
        return std::nullopt;
      }
    }
    bad(where + "." + key, "expected a number, got " + it->dump());
  }

  std::optional<std::uint64_t> unsigned_number(const Json& obj, const std::string& key, const std::string& where) {
    const auto v = number(obj, key, where);
    if (!v) return std::nullopt;
    if (*v < 0 || *v != std::floor(*v) || *v > 1.8e19)
      bad(where + "." + key, "expected a whole non-negative number, got " + obj.at(key).dump());
    return static_cast<std::uint64_t>(*v);
  }

  std::string str(const Json& obj, const std::string& key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    bad(where + "." + key, "expected a string, got " + it->dump());
  }

  NcclTestsHalf half(const Json& obj, const std::string& where) {
    NcclTestsHalf h;
    if (obj.is_null()) return h;
    if (!obj.is_object()) bad(where, "expected an object or null, got " + obj.dump());
    if (obj.contains("cpu_time")) {
      log_.cpu_time = true;
      h.time_us = number(obj, "cpu_time", where);
    } else {
      h.time_us = number(obj, "time", where);
    }
    h.algbw_gbps = number(obj, "alg_bw", where);
    h.busbw_gbps = number(obj, "bus_bw", where);
    h.wrong = unsigned_number(obj, "nwrong", where);
    h.time_tolerance_us = h.algbw_tolerance_gbps = h.busbw_tolerance_gbps = kJsonTolerance;
    return h;
  }

  NcclTestsPerIteration per_iteration(const Json& obj, const std::string& where) {
    if (!obj.is_object()) bad(where, "expected an object, got " + obj.dump());
    NcclTestsPerIteration p;
    p.min_us = number(obj, "min_us", where);
    p.max_us = number(obj, "max_us", where);
    p.avg_us = number(obj, "avg_us", where);
    p.p50_us = number(obj, "p50_us", where);
    p.p95_us = number(obj, "p95_us", where);
    p.p99_us = number(obj, "p99_us", where);
    p.stdev_us = number(obj, "stdev_us", where);
    p.cv_pct = number(obj, "cv_pct", where);
    auto list = [&](const Json& a, const std::string& w) {
      if (!a.is_array()) bad(w, "expected a list of numbers, got " + a.dump());
      std::vector<double> out;
      for (const auto& x : a) {
        if (!x.is_number()) bad(w, "expected a list of numbers, got " + x.dump());
        out.push_back(x.get<double>());
      }
      return out;
    };
    if (obj.contains("times_us")) p.times_us = list(obj.at("times_us"), where + ".times_us");
    if (obj.contains("per_process_max_times_us")) {
      const auto& a = obj.at("per_process_max_times_us");
      if (!a.is_array()) bad(where + ".per_process_max_times_us", "expected a list of lists");
      for (std::size_t i = 0; i < a.size(); ++i)
        p.per_process_max_times_us.push_back(
            list(a[i], where + ".per_process_max_times_us[" + std::to_string(i) + "]"));
    }
    return p;
  }

 private:
  std::string path_;
  NcclTestsLog& log_;
};

std::pair<int, int> line_and_column(std::string_view text, std::size_t byte) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public functions

double nccl_tests_busbw_factor(const std::string& collective, int num_ranks) {
  const auto kind = factor_kind(collective);
  if (!kind) throw InputError(unknown_name_message("nccl-tests collective", collective, collective_names()));
  if (num_ranks < 1) throw InputError("busbw factor needs at least 1 rank, got " + std::to_string(num_ranks));
  return factor_value(*kind, num_ranks);
}

std::string nccl_tests_collective_name(std::string_view program_or_name) {
  std::string_view s = program_or_name;
  const std::size_t slash = s.find_last_of("/\\");
  if (slash != std::string_view::npos) s.remove_prefix(slash + 1);
  const std::string l = lower(s);
  const std::size_t perf = l.find("_perf");
  const std::string base = squash(perf == std::string::npos ? l : l.substr(0, perf));
  for (const auto& c : kCollectives)
    if (c.name == base) return std::string(c.name);
  return {};
}

std::string nccl_version_string(long code) {
  if (code <= 0) return {};
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9; X*1000 + Y*100 + Z before.
  const bool modern = code >= 10000;
  const long major = modern ? code / 10000 : code / 1000;
  const long minor = modern ? (code % 10000) / 100 : (code % 1000) / 100;
  const long patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

bool nccl_tests_busbw_consistent(const NcclTestsHalf& half, double factor) {
  if (!half.algbw_gbps || !half.busbw_gbps) return true;
  const double expected = *half.algbw_gbps * factor;
  const double allowed =
      half.algbw_tolerance_gbps * factor + half.busbw_tolerance_gbps + 1e-9 * std::max(1.0, std::abs(expected));
  return std::abs(expected - *half.busbw_gbps) <= allowed;
}

std::vector<NcclTestsLog> parse_nccl_tests_logs(std::string_view text, const std::string& source_path) {
  const std::string_view t = trim(text);
  if (!t.empty() && t.front() == '{')
    throw InputError(source_path + ": this is JSON (nccl-tests -J output?), not a console log; import it as JSON");
  TextParser parser(text, source_path);
  return parser.run();
}

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& source_path) {
  auto logs = parse_nccl_tests_logs(text, source_path);
  if (logs.size() > 1) {
    throw InputError(
        at(source_path, logs[1].first_line) + "a second nccl-tests run starts here (the first spans lines " +
        std::to_string(logs[0].first_line) + "-" + std::to_string(logs[0].last_line) + "); this log holds " +
        std::to_string(logs.size()) + " runs: import them one by one or as a multi-run log");
  }
  return std::move(logs.front());
}

NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& source_path) {
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    const auto [line, column] = line_and_column(text, byte);
    const bool at_end = std::string_view(e.what()).find("end of input") != std::string_view::npos;
    throw InputError(source_path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                     (at_end ? "the JSON ends early (was the nccl-tests run killed before it closed the file?): "
                             : "not valid JSON: ") +
                     e.what());
  } catch (const Json::out_of_range& e) {
    throw InputError(source_path + ": not valid JSON: a number out of range (" + e.what() + ")");
  }
  NcclTestsLog log;
  log.format = "json";
  log.source_path = source_path;
  JsonReader r(source_path, log);
  if (!j.is_object())
    r.bad("top level", "expected the JSON object nccl-tests -J writes, got " + std::string(j.type_name()));

  if (j.contains("version")) {
    if (!j.at("version").is_number_integer()) r.bad("version", "expected an integer, got " + j.at("version").dump());
    log.json_version = j.at("version").get<int>();
    if (*log.json_version > 3)
      log.warnings.push_back("JSON file version " + std::to_string(*log.json_version) +
                             " is newer than the versions known (1-3); reading the fields those define");
  } else {
    log.warnings.push_back("no 'version' key: not sure this is an nccl-tests -J file");
  }

  // Program (args[0]) and collective.
  if (j.contains("args") && j.at("args").is_array() && !j.at("args").empty() && j.at("args")[0].is_string()) {
    std::string program = j.at("args")[0].get<std::string>();
    const std::size_t slash = program.find_last_of("/\\");
    log.program = slash == std::string::npos ? program : program.substr(slash + 1);
    log.collective = nccl_tests_collective_name(log.program);
    if (!log.collective.empty()) log.collective_source = "program name (args[0])";
  }
  if (j.contains("nccl_version") && j.at("nccl_version").is_number_integer())
    log.nccl_version = nccl_version_string(j.at("nccl_version").get<long>());
  if (j.contains("env") && j.at("env").is_array()) {
    for (const auto& e : j.at("env")) {
      if (!e.is_string()) continue;
      const std::string kv = e.get<std::string>();
      const std::size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = kv.substr(0, eq);
      for (std::string_view prefix : {"NCCL_", "CUDA_", "UCX_", "OMPI_", "MPICH_"})
        if (key.rfind(prefix, 0) == 0) log.env[key] = kv.substr(eq + 1);
    }
  }

  // Run parameters, under the console log's names.
  const Json* devices = nullptr;
  if (j.contains("config")) {
    const auto& c = j.at("config");
    if (!c.is_object()) r.bad("config", "expected an object, got " + c.dump());
    const std::pair<const char*, const char*> names[] = {{"nthreads", "nThread"},
                                                         {"ngpus", "nGpus"},
                                                         {"minimum_bytes", "minBytes"},
                                                         {"maximum_bytes", "maxBytes"},
                                                         {"warmup_iters", "warmup iters"},
                                                         {"iterations", "iters"},
                                                         {"aggregated_iterations", "agg iters"},
                                                         {"validation", "validation"},
                                                         {"graph", "graph"},
                                                         {"blocking_collectives", "blocking"},
                                                         {"per_iter_timing", "per_iter_timing"},
                                                         {"per_iter_skip", "per_iter_skip"},
                                                         {"parallel_init", "parallel_init"}};
    for (const auto& [json_key, name] : names)
      if (c.contains(json_key)) log.header[name] = r.str(c, json_key, "config");
    if (c.contains("step_factor")) log.header["step"] = r.str(c, "step_factor", "config") + "(factor)";
    if (c.contains("step_bytes")) log.header["step"] = r.str(c, "step_bytes", "config") + "(bytes)";
    if (c.contains("devices")) devices = &c.at("devices");
  }
  if (!devices && j.contains("devices")) devices = &j.at("devices");
  if (devices) {
    if (!devices->is_array()) r.bad("config.devices", "expected a list, got " + devices->dump());
    for (std::size_t i = 0; i < devices->size(); ++i) {
      const auto& d = (*devices)[i];
      const std::string where = "config.devices[" + std::to_string(i) + "]";
      if (!d.is_object()) r.bad(where, "expected an object, got " + d.dump());
      NcclTestsDevice dev;
      dev.rank = static_cast<int>(r.number(d, "rank", where).value_or(0));
      if (const auto g = r.number(d, "group", where)) dev.group = static_cast<int>(*g);
      if (const auto p = r.number(d, "pid", where)) dev.pid = static_cast<long>(*p);
      dev.host = r.str(d, "hostname", where);
      if (const auto v = r.number(d, "device", where)) dev.device = static_cast<int>(*v);
      dev.bus_id = r.str(d, "device_hex", where);
      dev.name = r.str(d, "device_info", where);
      log.devices.push_back(std::move(dev));
    }
  }

  // Results.
  if (!j.contains("results"))
    r.bad("results",
          "missing: no results in this file (the run stopped before its first size, or this is not nccl-tests -J "
          "output)");
  const auto& results = j.at("results");
  if (!results.is_array()) r.bad("results", "expected a list, got " + results.dump());
  if (results.empty()) r.bad("results", "the list is empty: nothing was measured");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& o = results[i];
    const std::string where = "results[" + std::to_string(i) + "]";
    if (!o.is_object()) r.bad(where, "expected an object, got " + o.dump());
    NcclTestsRow row;
    row.index = i;
    const auto size = r.unsigned_number(o, "size", where);
    if (!size) r.bad(where + ".size", "missing");
    row.size_bytes = *size;
    row.count = r.unsigned_number(o, "count", where).value_or(0);
    row.type = r.str(o, "type", where);
    row.redop = r.str(o, "redop", where);
    const std::string root = r.str(o, "root", where);
    if (!root.empty()) {
      const auto v = to_long(root);
      if (!v) r.bad(where + ".root", "expected an integer, got " + in_quotes(root));
      row.root = *v;
    }
    if (o.contains("out_of_place")) row.out_of_place = r.half(o.at("out_of_place"), where + ".out_of_place");
    if (o.contains("in_place")) row.in_place = r.half(o.at("in_place"), where + ".in_place");
    if (o.contains("out_of_place_per_iter"))
      row.out_of_place.per_iteration = r.per_iteration(o.at("out_of_place_per_iter"), where + ".out_of_place_per_iter");
    if (o.contains("in_place_per_iter"))
      row.in_place.per_iteration = r.per_iteration(o.at("in_place_per_iter"), where + ".in_place_per_iter");
    if (!row.out_of_place.present() && !row.in_place.present())
      r.bad(where, "neither out_of_place nor in_place holds a measurement");
    log.rows.push_back(std::move(row));
  }

  // Footer (version 1 spelled the average "average_bus_bandwidith" / "bandwidith").
  if (j.contains("out_of_bounds") && j.at("out_of_bounds").is_object()) {
    if (const auto v = r.number(j.at("out_of_bounds"), "count", "out_of_bounds"))
      log.out_of_bounds = static_cast<long>(*v);
  }
  for (const char* key : {"average_bus_bandwidth", "average_bus_bandwidith"}) {
    if (!j.contains(key) || !j.at(key).is_object()) continue;
    const auto& a = j.at(key);
    log.avg_busbw = a.contains("bandwidth") ? r.number(a, "bandwidth", key) : r.number(a, "bandwidith", key);
  }
  if (!log.avg_busbw) log.warnings.push_back("no average_bus_bandwidth: the run may have stopped before its end");
  if (j.contains("errors") && j.at("errors").is_array())
    for (const auto& e : j.at("errors"))
      if (e.is_string() && !e.get<std::string>().empty()) log.errors.push_back(e.get<std::string>());

  if (log.collective.empty()) infer_collective_from_path(log);
  if (log.collective.empty()) infer_collective_from_rows(log);

  // Ranks. nccl-tests parses only the first device line of each process into the JSON, so
  // config.devices has one entry per process, ranks 0, k, 2k, ... with k = nThread x nGpus.
  RankEvidence ev;
  std::optional<int> pp;
  {
    const auto t = log.header.find("nThread"), g = log.header.find("nGpus");
    if (t != log.header.end() && g != log.header.end()) {
      const auto tv = to_long(t->second), gv = to_long(g->second);
      if (tv && gv && *tv > 0 && *gv > 0) pp = static_cast<int>(*tv * *gv);
    }
  }
  ev.per_process = pp;
  const int num_devices = static_cast<int>(log.devices.size());
  bool per_process_entries = num_devices > 0 && pp.has_value();
  bool every_rank = num_devices > 0;
  for (int i = 0; i < num_devices; ++i) {
    if (pp && log.devices[static_cast<std::size_t>(i)].rank != i * *pp) per_process_entries = false;
    if (log.devices[static_cast<std::size_t>(i)].rank != i) every_rank = false;
  }
  if (per_process_entries) {
    ev.listed = num_devices * *pp;
    ev.listed_source = *pp > 1 ? "JSON devices (one per process) x nThread x nGpus" : "JSON devices";
    log.devices_complete = *pp == 1;
  } else if (every_rank && !pp) {
    ev.listed = num_devices;
    ev.listed_source = "JSON devices";
    log.devices_complete = true;
  } else {
    ev.incomplete_reason = num_devices == 0 ? "the JSON has no config.devices"
                                            : "config.devices does not list ranks 0, k, 2k, ... (k = nThread x nGpus)";
    for (const auto& d : log.devices) ev.at_least = std::max(ev.at_least, d.rank + 1);
  }
  resolve_num_ranks(log, ev);
  check_busbw(log);
  check_avg_busbw(log);
  return log;
}

std::vector<NcclTestsLog> parse_nccl_tests_output(std::string_view text, const std::string& source_path) {
  const std::string_view t = trim(text);
  if (!t.empty() && t.front() == '{') return {parse_nccl_tests_json(text, source_path)};
  return parse_nccl_tests_logs(text, source_path);
}

std::vector<NcclTestsLog> load_nccl_tests_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the nccl-tests output file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_nccl_tests_output(buffer.str(), path);
}

}  // namespace collbench::record
