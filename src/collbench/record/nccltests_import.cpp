// nccl-tests import: the text helpers, rank count, busbw checks and collective inference both
// formats share (nccltests_detail.hpp), the public entry points, and the file loader. Console
// logs: nccltests_text.cpp; -J JSON: nccltests_json.cpp (see the header for the layouts handled).
// Pure C++; needs no MPI, CUDA or GPU.
#include "collbench/record/nccltests_import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_detail.hpp"

namespace collbench::record {
namespace nccltests_detail {

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

namespace {  // used only in this file

// ---------------------------------------------------------------------------------------------
// Collectives and their busbw factors

using FactorKind = BusbwRule;

// nccl-tests' own collectives that the fact table has no row for (the others, and their busbw
// factors, are rows of core/collective_facts.hpp with an nccl-tests program). A name the table
// gains is taken from the table: the row wins, this entry is skipped.
struct NcclTestsOnly {
  std::string_view name;
  FactorKind kind;
};
constexpr NcclTestsOnly kNcclTestsOnly[] = {
    {"hypercube", FactorKind::one},
    {"scatter", FactorKind::n_minus_1_over_n},
    {"gather", FactorKind::n_minus_1_over_n},
};

// Every nccl-tests collective, longest names first, so that searching a file name finds
// "allreduce" before "reduce" (equal lengths: collbench's table order, then nccl-tests' own).
const std::vector<std::string_view>& search_order() {
  static const std::vector<std::string_view> kOrder = [] {
    std::vector<std::string_view> out;
    for (const auto& f : all_collective_facts()) {
      if (f.nccl_tests) out.push_back(f.name);
    }
    for (const auto& c : kNcclTestsOnly) {
      if (find_collective_facts(c.name) == nullptr) out.push_back(c.name);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
    return out;
  }();
  return kOrder;
}

std::optional<FactorKind> factor_kind(std::string_view collective) {
  if (const CollectiveFacts* f = find_collective_facts(collective); f != nullptr && f->nccl_tests) return f->busbw;
  for (const auto& c : kNcclTestsOnly)
    if (c.name == collective) return c.kind;
  return std::nullopt;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> out(search_order().begin(), search_order().end());
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

std::string_view factor_text(FactorKind kind) {
  switch (kind) {
    case FactorKind::two_n_minus_1_over_n:
      return "2(n-1)/n";
    case FactorKind::n_minus_1_over_n:
      return "(n-1)/n";
    case FactorKind::one:
      return "1";
    case FactorKind::none:
      return "0";
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

std::string range_text(long lo, long hi, bool unbounded) {
  if (unbounded) return std::to_string(lo) + " or more";
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + ".." + std::to_string(hi);
}

}  // namespace

namespace {

// What the busbw/algbw ratio of the rows can say about the rank count.
struct RatioEvidence {
  std::optional<FactorKind> kind;
  RatioBounds bounds;
  bool informative = false;
};

// Reads the factor kind and the ratio bounds; warns when the rows disagree.
RatioEvidence read_ratio(NcclTestsLog& log) {
  RatioEvidence r{factor_kind(log.collective), ratio_bounds(log.rows)};
  r.informative = r.kind && *r.kind != FactorKind::one && r.bounds.num_used > 0 && !r.bounds.inconsistent;
  if (r.bounds.inconsistent) {
    log.warnings.push_back("the busbw/algbw ratios of the rows disagree beyond the printed rounding (" +
                           r.bounds.lo_where + " vs " + r.bounds.hi_where +
                           "); the log may have been edited or mixes runs");
  }
  return r;
}

// Warns when a rank count from the log does not fit the ratio.
void check_against_ratio(NcclTestsLog& log, const RatioEvidence& r, int n, const std::string& source) {
  if (!r.informative) return;
  const double f = busbw_factor(*r.kind, n);
  if (f >= r.bounds.lo && f <= r.bounds.hi) return;
  const IntRange fit = ranks_for_factor(*r.kind, r.bounds.lo, r.bounds.hi);
  log.warnings.push_back("the " + source + " gives " + std::to_string(n) + " ranks, but the busbw/algbw ratio fits " +
                         (fit.lo > fit.hi ? std::string("no rank count") : range_text(fit.lo, fit.hi, fit.unbounded)) +
                         " (factor " + std::string(factor_text(*r.kind)) + ")");
}

// Takes the rank count the log states (device list or NCCL INFO line); false when it states none.
bool take_stated_ranks(NcclTestsLog& log, const RankEvidence& ev, const RatioEvidence& r) {
  if (ev.listed) {
    log.num_ranks = ev.listed;
    log.num_ranks_source = ev.listed_source;
    check_against_ratio(log, r, *ev.listed, ev.listed_source);
    return true;
  }
  if (!ev.nccl_info || *ev.nccl_info < ev.at_least) return false;
  log.num_ranks = ev.nccl_info;
  log.num_ranks_source = "NCCL INFO nranks";
  log.warnings.push_back("rank count " + std::to_string(*ev.nccl_info) + " taken from the NCCL INFO 'nranks' line" +
                         (ev.incomplete_reason.empty() ? "" : " because " + ev.incomplete_reason));
  check_against_ratio(log, r, *ev.nccl_info, "NCCL INFO nranks line");
  return true;
}

// Why the ratio cannot be read at all; empty when it can.
std::string ratio_unreadable(const NcclTestsLog& log, const RatioEvidence& r) {
  if (!r.kind) return " and the collective is unknown, so the busbw/algbw ratio cannot be read";
  if (*r.kind == FactorKind::one) {
    return ", and busbw = algbw for " + log.collective + ", so the busbw/algbw ratio carries no rank count";
  }
  if (r.bounds.num_used == 0) return ", and no row has an algbw large enough to read the busbw/algbw ratio";
  if (r.bounds.inconsistent) return ", and the busbw/algbw ratios disagree";
  return "";
}

// Recovers the rank count (or a lower bound) from a readable ratio, given the ranks seen and nThread x nGpus.
void recover_from_ratio(NcclTestsLog& log, const RatioEvidence& r, const std::string& why, int at_least, int pp) {
  const FactorKind kind = *r.kind;
  const IntRange fit = ranks_for_factor(kind, r.bounds.lo, r.bounds.hi);
  // Apply what is known: at least the ranks seen, and a multiple of nThread x nGpus.
  const long lo = std::max<long>(fit.lo, at_least > 0 ? at_least : 1);
  const long first = (lo + pp - 1) / pp * pp;
  const std::string constraint = pp > 1 ? ", multiple of nThread x nGpus = " + std::to_string(pp) : "";
  if (fit.lo > fit.hi || first > fit.hi) {
    log.warnings.push_back("could not recover the rank count: " + why + ", and no rank count" +
                           (at_least > 0 ? " >= " + std::to_string(at_least) : std::string()) + constraint +
                           " fits the busbw/algbw ratio (factor " + std::string(factor_text(kind)) + " in [" +
                           std::to_string(r.bounds.lo) + ", " + std::to_string(r.bounds.hi) + "])");
    return;
  }
  if (!fit.unbounded && first + pp > fit.hi) {
    log.num_ranks = static_cast<int>(first);
    log.num_ranks_source = "busbw/algbw ratio";
    log.warnings.push_back("rank count " + std::to_string(first) + " recovered from the busbw/algbw ratio (factor " +
                           std::string(factor_text(kind)) + " for " + log.collective + ", over " +
                           std::to_string(r.bounds.num_used) + " measurements" + constraint + ") because " + why);
    return;
  }
  log.num_ranks_at_least = static_cast<int>(first);
  log.warnings.push_back("could not recover the rank count: " + why + ", and the busbw/algbw ratio (factor " +
                         std::string(factor_text(kind)) + ") fits " + range_text(first, fit.hi, fit.unbounded) +
                         " ranks" + constraint + "; the printed digits are too few to tell");
}

}  // namespace

void resolve_num_ranks(NcclTestsLog& log, const RankEvidence& ev) {
  const RatioEvidence r = read_ratio(log);
  if (take_stated_ranks(log, ev, r)) return;
  const std::string why = ev.incomplete_reason.empty() ? "the device list is incomplete" : ev.incomplete_reason;
  const int at_least = std::max(ev.at_least, ev.per_process.value_or(0));
  if (at_least > 0) log.num_ranks_at_least = at_least;
  const std::string unreadable = ratio_unreadable(log, r);
  if (!unreadable.empty()) {
    const std::string bound_text = at_least > 0 ? " (at least " + std::to_string(at_least) + " ranks seen)" : "";
    log.warnings.push_back("could not recover the rank count: " + why + unreadable + bound_text);
    return;
  }
  const int pp = ev.per_process.value_or(1) > 0 ? ev.per_process.value_or(1) : 1;
  recover_from_ratio(log, r, why, at_least, pp);
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
    log.collective = to_string(CollectiveId::allreduce);
    log.collective_source = "busbw/algbw ratio above 1";
  } else if (b.hi < 1.0 && reduction) {
    log.collective = to_string(CollectiveId::reducescatter);
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
  for (const std::string_view name : search_order()) {
    if (s.find(name) != std::string::npos) {
      log.collective = std::string(name);
      log.collective_source = "file name";
      log.warnings.push_back("collective '" + log.collective + "' inferred from the file name " + in_quotes(base));
      return;
    }
  }
}

}  // namespace nccltests_detail

using namespace nccltests_detail;

// ---------------------------------------------------------------------------------------------
// Public functions

double nccl_tests_busbw_factor(const std::string& collective, int num_ranks) {
  const auto kind = factor_kind(collective);
  if (!kind) throw InputError(unknown_name_message("nccl-tests collective", collective, collective_names()));
  if (num_ranks < 1) throw InputError("busbw factor needs at least 1 rank, got " + std::to_string(num_ranks));
  return busbw_factor(*kind, num_ranks);
}

std::string nccl_tests_collective_name(std::string_view program_or_name) {
  std::string_view s = program_or_name;
  const std::size_t slash = s.find_last_of("/\\");
  if (slash != std::string_view::npos) s.remove_prefix(slash + 1);
  const std::string l = lower(s);
  const std::size_t perf = l.find("_perf");
  const std::string base = squash(perf == std::string::npos ? l : l.substr(0, perf));
  if (factor_kind(base)) return base;
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
