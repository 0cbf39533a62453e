// HTML writers: one self-contained page (inline CSS and SVG charts; no JavaScript, no network)
// for per-case reports and comparisons (`collbench report FILES --html FILE`) and for the
// weak-scaling report (`collbench report weak-scaling ... --html FILE`); the acceptance page
// (accept/html.hpp) is built from the same pieces. Like the Markdown writers they render what the
// records, compare_files() and build_weak_scaling() hold and compute nothing; projections are labelled
// "projected" and never shown as measured. Every string taken from input (host names, paths,
// YAML descriptions, reasons) is escaped, and the page carries a Content-Security-Policy that
// forbids scripts and remote loads. Pure C++ (no MPI, no GPU).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/compare/compare.hpp"
#include "collbench/record/record.hpp"
#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::report {

// Who wrote the page and how (shown in its footer).
struct HtmlContext {
  std::string generator;             // "collbench 0.1.0 (git 1a2b3c4)"
  std::string generated_at;          // ISO 8601 UTC
  std::vector<std::string> command;  // the report command's argv
};

namespace html {

// Text and attribute escaping (& < > " '; control characters dropped).
std::string escape(std::string_view text);

// A shell-quoted command line from argv ("a 'b c'").
std::string shell_join(const std::vector<std::string>& argv);

// The page around `body_html`: head with inline CSS and a CSP forbidding scripts and remote
// loads, a header bar with `title` (escaped here) and `subtitle_html` (already HTML), a footer
// naming the generator and command.
std::string page(std::string_view title, std::string_view subtitle_html, std::string_view body_html,
                 const HtmlContext& ctx);

// <span class="badge pass">PASS</span>; the class is the lower-cased word.
std::string badge(std::string_view word);

// Summary cards: label, value, optional CSS class (pass, fail, waived) and a detail line; escaped.
struct Card {
  Card(std::string label_, std::string value_, std::string css_class_ = "", std::string detail_ = "")
      : label(std::move(label_)),
        value(std::move(value_)),
        css_class(std::move(css_class_)),
        detail(std::move(detail_)) {}
  std::string label, value, css_class, detail;
};
std::string cards(const std::vector<Card>& items);

// One card of provenance per results file: run id, start time, collbench version and git sha,
// the command line, launcher, ranks and hosts, system profile, MPI/CUDA/NCCL versions, backends,
// injected fault, sweep name and description, environment (collapsed).
std::string provenance_section(const std::vector<record::InputFile>& files, std::string_view heading = "Provenance");

// The per-case table (the Markdown table's columns plus the correctness check as PASS/FAIL/N/A);
// one <tr class="case"> per record.
std::string case_table(const std::vector<record::CaseRecord>& records);

// busbw vs message size (log2 x) per group of cases of one file that differ only in size, with
// the model's bound (dashed) and expected (dotted) busbw where the records carry `model`.
std::string busbw_charts(const record::InputFile& file);

}  // namespace html

// `collbench report FILES --html`: summary, per file its charts and case table, the comparison
// (when given), provenance.
std::string render_cases_html(const std::vector<record::InputFile>& files, const compare::Comparison* comparison,
                              const HtmlContext& ctx);

// `collbench report weak-scaling --html`: summary, per group E(N) and % of bound vs N (measured
// points solid with their confidence interval, projections hollow, dashed and labelled
// "projected" with their prediction interval), the measured and projected tables and notes; then
// busbw vs size per input file and provenance.
std::string render_weak_scaling_html(const scaling::WeakScalingReport& report,
                                     const std::vector<record::InputFile>& files, const HtmlContext& ctx);

}  // namespace collbench::report
