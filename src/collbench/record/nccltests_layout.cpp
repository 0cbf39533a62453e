// nccl-tests table layouts, launcher prefixes and cells (see nccltests_layout.hpp).
#include "collbench/record/nccltests_layout.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "collbench/record/nccltests_detail.hpp"

namespace collbench::record::nccltests_detail {
namespace {

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

bool is_date(std::string_view s) {
  return std::regex_match(s.begin(), s.end(), std::regex(R"(\d{4}-\d{2}-\d{2})"));
}

bool is_clock(std::string_view s) {
  return std::regex_match(s.begin(), s.end(), std::regex(R"(\d{2}:\d{2}:\d{2})"));
}

bool is_integer_token(std::string_view s) {
  return to_long(s).has_value();
}

}  // namespace

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

namespace {

// Cells of one measurement half: times, bandwidths, wrong elements, per-iteration statistics.
void read_half_cell(NcclTestsHalf& h, const Column& col, std::string_view tok, const CellContext& ctx,
                    const std::string& name) {
  auto number = [&](double scale) -> std::optional<double> {
    if (tok == "N/A") return std::nullopt;  // a half that was not measured (collbench --layout nccl-tests)
    const auto v = to_double(tok);
    if (!v) fail(*ctx.path, ctx.line, "column " + name + ": " + in_quotes(tok) + " is not a number");
    if (!std::isfinite(*v)) {
      ctx.warnings->push_back(at(*ctx.path, ctx.line) + "column " + name + " is " + in_quotes(tok) + "; left empty");
      return std::nullopt;
    }
    return *v * scale;
  };
  switch (col.kind) {
    case Col::time:
      h.time_us = number(ctx.ms ? 1000.0 : 1.0);
      h.time_tolerance_us = printed_tolerance(tok) * (ctx.ms ? 1000.0 : 1.0);
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
        fail(*ctx.path, ctx.line,
             "column " + name + ": " + in_quotes(tok) + " is not a count of wrong elements (or N/A)");
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
    default:
      break;
  }
}

}  // namespace

void read_cell(NcclTestsRow& row, const Column& col, std::string_view tok, const CellContext& ctx) {
  const std::string name = in_quotes(col.label) + (col.half == 0   ? " (out-of-place)"
                                                   : col.half == 1 ? " (in-place)"
                                                                   : "");
  switch (col.kind) {
    case Col::size:
    case Col::count: {
      const auto v = to_u64(tok);
      if (!v) fail(*ctx.path, ctx.line, "column " + name + ": " + in_quotes(tok) + " is not a whole number");
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
      if (!v) fail(*ctx.path, ctx.line, "column " + name + ": " + in_quotes(tok) + " is not an integer");
      row.root = *v;
      break;
    }
    case Col::timestamp:
      break;
    default:
      read_half_cell(col.half == 1 ? row.in_place : row.out_of_place, col, tok, ctx, name);
      break;
  }
}

}  // namespace collbench::record::nccltests_detail
