// nccl-tests console logs: the table layouts of every nccl-tests version, launcher prefixes,
// several runs in one log (see nccltests_import.hpp for the layouts handled).
#include "collbench/record/nccltests_import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_detail.hpp"

namespace collbench::record {
namespace {

using namespace nccltests_detail;

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

}  // namespace

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

}  // namespace collbench::record
