// nccl-tests console logs: the table layouts of every nccl-tests version, launcher prefixes,
// several runs in one log (see nccltests_import.hpp for the layouts handled).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_detail.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/record/nccltests_layout.hpp"

namespace collbench::record {
namespace {

using namespace nccltests_detail;

using Match = std::match_results<std::string_view::const_iterator>;

bool search(Match& m, const std::regex& re, std::string_view s) {
  return std::regex_search(s.begin(), s.end(), m, re);
}

// The lines of a log that are not table rows.
struct LinePatterns {
  std::regex start{R"(Collective test starting:\s*(\S+))"};
  std::regex end{R"(Collective test concluded:\s*(\S+))"};
  std::regex version{R"(nccl-tests version\s+(\S+))"};
  std::regex library{R"(nccl-library=(\d+))"};
  std::regex compiled{R"(NCCL Tests compiled with NCCL\s+(\S+))"};
  std::regex info_version{R"(NCCL version\s+(\S+))"};
  std::regex bare_version{R"(^[^#]*?\bNCCL version\s+(\d+\.\d+\.\d+\S*))"};
  std::regex info_nranks{R"(\bn[Rr]anks\s+(\d+))"};
  std::regex nthread{R"(\bnThread\s+\d+)"};
  std::regex oob{R"(Out of bounds values\s*:\s*(\d+))"};
  std::regex avg{R"(Avg bus bandwidth\s*:\s*(\S+))"};
  std::regex rank{R"(^\s*Rank\s+\d+)"};
  std::regex reduced{R"(Reducing maxBytes to\s+(\d+))"};
  std::regex program{R"(\b([a-z][a-z_]*_perf)\w*)"};
};

const LinePatterns& patterns() {
  static const LinePatterns p;
  return p;
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
    if (handle_test_line(l) || handle_run_line(l)) return;
    if (comment) {
      handle_comment(l, body, hash);
      return;
    }
    if (is_ellipsis(raw)) {
      mark_cut(l.number);
      return;
    }
    handle_candidate_row(l);
    note_program(raw);
  }

  // The lines nccl-tests prints around a run: start, end, its version, NCCL's compile version.
  // Substring checks first: logs with NCCL_DEBUG=INFO from many ranks run to millions of lines.
  bool handle_test_line(const Line& l) {
    const std::string_view raw = l.text;
    const auto& re = patterns();
    Match m;
    const auto has = [&](std::string_view needle) { return raw.find(needle) != std::string_view::npos; };
    if (has("Collective test starting") && search(m, re.start, raw)) {
      new_section_if_rows(l.number);
      note(l.number);
      cur().log.program = m[1].str();
      return true;
    }
    if (has("Collective test concluded") && search(m, re.end, raw)) {
      note(l.number);
      if (cur().log.program.empty()) cur().log.program = m[1].str();
      cur().table_ended = true;
      return true;
    }
    if (has("nccl-tests version") && search(m, re.version, raw)) {
      new_section_if_rows(l.number);
      note(l.number);
      cur().log.nccl_tests_version = m[1].str();
      const std::string rest(raw);
      std::smatch lib;
      if (std::regex_search(rest, lib, re.library))
        cur().library_version = nccl_version_string(to_long(lib[1].str()).value_or(0));
      return true;
    }
    if (has("NCCL Tests compiled") && search(m, re.compiled, raw)) {
      note(l.number);
      cur().compiled_version = m[1].str();
      return true;
    }
    return false;
  }

  // NCCL INFO lines, the run parameters, and the footer (out-of-bounds values, average busbw).
  bool handle_run_line(const Line& l) {
    const std::string_view raw = l.text;
    const auto& re = patterns();
    Match m;
    const auto has = [&](std::string_view needle) { return raw.find(needle) != std::string_view::npos; };
    // NCCL_DEBUG=VERSION prints the bare line "NCCL version 2.21.5+cuda12.4" (no "NCCL INFO").
    if (!has("NCCL INFO") && has("NCCL version") && search(m, re.bare_version, raw)) {
      note(l.number);
      if (!cur().info_version) cur().info_version = m[1].str();
      return true;
    }
    if (raw.find("NCCL INFO") != std::string_view::npos) {
      if (!cur().info_version && has("NCCL version") && search(m, re.info_version, raw)) {
        cur().info_version = m[1].str();
      }
      if ((has("nranks") || has("nRanks")) && search(m, re.info_nranks, raw)) {
        const int n = static_cast<int>(to_long(m[1].str()).value_or(0));
        cur().info_nranks = std::max(cur().info_nranks.value_or(0), n);
      }
      note_noise(l);
      return true;
    }
    if (has("nThread") && search(m, re.nthread, raw)) {
      new_section_if_rows(l.number);
      note(l.number);
      parse_run_parameters(raw.substr(static_cast<std::size_t>(m.position(0))));
      return true;
    }
    if (has("Out of bounds") && search(m, re.oob, raw)) {
      note(l.number);
      cur().log.out_of_bounds = to_long(m[1].str());
      end_table(l.number);
      return true;
    }
    if (has("Avg bus bandwidth") && search(m, re.avg, raw)) {
      note(l.number);
      const std::string v = m[1].str();
      cur().log.avg_busbw = to_double(v);
      if (!cur().log.avg_busbw)
        cur().log.warnings.push_back(at(path_, l.number) + "unreadable average bus bandwidth " + in_quotes(v));
      end_table(l.number);
      return true;
    }
    return false;
  }

  // A comment line: a device, the table header, its group and units lines, or a note.
  void handle_comment(const Line& l, std::string_view body, std::size_t hash) {
    const auto& re = patterns();
    Match m;
    if (body.find("Rank") != std::string_view::npos && search(m, re.rank, body)) {
      note(l.number);
      parse_device(body, l.number);
      return;
    }
    if (looks_like_table_header(body)) {
      new_section_if_rows(l.number);
      if (cur().layout)
        fail(path_, l.number,
             "a second table header, but the one at line " + std::to_string(cur().layout->line) + " has no data rows");
      note(l.number);
      cur().layout = parse_header_layout(body, cur().group_text, l.number, path_);
      shape_ = prefix_shape(l.text.substr(0, hash));
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
    handle_comment_note(l, body, lb);
  }

  // The rest of the comment lines: a cut list, "Using devices", a reduced maxBytes, errors.
  void handle_comment_note(const Line& l, std::string_view body, const std::string& lb) {
    Match m;
    if (is_ellipsis(body)) {
      mark_cut(l.number);
      return;
    }
    if (lb.find("using devices") != std::string::npos) {
      cur().using_devices = true;
      return;
    }
    if (l.text.find("Reducing maxBytes") != std::string_view::npos && search(m, patterns().reduced, body)) {
      cur().log.header["maxBytes"] = m[1].str();
      cur().log.warnings.push_back(at(path_, l.number) + "nccl-tests reduced maxBytes to " + m[1].str() +
                                   " for lack of GPU memory");
      return;
    }
    const std::string_view tb = trim(body);
    if (tb.substr(0, 6) == "error:") cur().log.errors.emplace_back(trim(tb.substr(6)));
  }

  // A program name ("all_reduce_perf") outside a table names the next run's collective.
  void note_program(std::string_view raw) {
    Match m;
    if ((!cur().layout || cur().table_ended) && raw.find("_perf") != std::string_view::npos &&
        search(m, patterns().program, raw)) {
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
    const CellContext ctx{&path_, line, ms, &s.log.warnings};
    std::size_t k = 0;
    for (const auto& col : layout.cols) {
      read_cell(row, col, tokens[k], ctx);
      k += col.kind == Col::timestamp ? 2 : 1;
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
    set_collective(log, num_sections);
    resolve_num_ranks(log, rank_evidence(s));
    check_busbw(log);
    check_avg_busbw(log);
    return std::move(log);
  }

  static void set_collective(NcclTestsLog& log, std::size_t num_sections) {
    if (!log.program.empty()) {
      log.collective = nccl_tests_collective_name(log.program);
      log.collective_source = "program name";
      if (log.collective.empty())
        log.warnings.push_back("unknown nccl-tests program " + in_quotes(log.program) + "; collective not set");
    }
    if (log.collective.empty() && num_sections == 1) infer_collective_from_path(log);
    if (log.collective.empty()) infer_collective_from_rows(log);
  }

  // nThread x nGpus of the run parameters: the rank count is a multiple of it.
  static std::optional<int> per_process(const NcclTestsLog& log) {
    const auto t = log.header.find("nThread");
    const auto g = log.header.find("nGpus");
    if (t == log.header.end() || g == log.header.end()) return std::nullopt;
    const auto tv = to_long(t->second), gv = to_long(g->second);
    if (!tv || !gv || *tv < 1 || *gv < 1) return std::nullopt;
    return static_cast<int>(*tv * *gv);
  }

  // What the device list, the run parameters and NCCL's INFO lines say about the rank count.
  static RankEvidence rank_evidence(Section& s) {
    NcclTestsLog& log = s.log;
    RankEvidence ev;
    std::set<int> ranks;
    bool duplicates = false;
    for (const auto& d : log.devices) duplicates = !ranks.insert(d.rank).second || duplicates;
    const auto pp_value = per_process(log);
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
      return ev;
    }
    ev.at_least = ranks.empty() ? 0 : *ranks.rbegin() + 1;
    if (log.devices.empty())
      ev.incomplete_reason = "the log has no device list";
    else if (s.devices_cut)
      ev.incomplete_reason = "the device list is cut ('...' at line " + std::to_string(s.devices_cut_line) + ")";
    else if (duplicates)
      ev.incomplete_reason = "the device list names some ranks twice";
    else
      ev.incomplete_reason = "the device list skips ranks";
    return ev;
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
