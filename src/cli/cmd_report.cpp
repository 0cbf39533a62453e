// `collbench report FILES...`: per-case tables (console, Markdown, CSV) and comparisons between
// runs, backends or algorithms; `collbench report weak-scaling FILES...`: the weak-scaling report
// folder (report.md, report.json, PNG plots drawn by the plotting package when matplotlib is
// available); `collbench report accept DIR|verdict.json`: an acceptance run's verdicts again. Each
// takes --html FILE: one self-contained page (docs/report.md). Reads result files only: no MPI,
// no GPU.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/out_dir.hpp"
#include "cli/report_tables.hpp"
#include "cli/report_weak_scaling.hpp"
#include "cli/subcommand.hpp"
#include "collbench/accept/html.hpp"
#include "collbench/accept/writers.hpp"
#include "collbench/compare/compare.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/git_sha.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/model/placement_model.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/report/html.hpp"
#include "collbench/report/markdown.hpp"
#include "collbench/report/table.hpp"
#include "collbench/report/writer_registries.hpp"
#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::cli {
namespace {

namespace fs = std::filesystem;

struct ReportFlags {
  std::vector<std::string> files;
  std::vector<std::string> formats;  // --format FMT[=PATH]
  std::string compare_by = "auto";
  std::optional<std::string> baseline;
  std::optional<std::string> html;
  std::optional<int> ranks_per_domain;
  std::optional<std::string> system;
  std::vector<std::string> sets;
};

struct AcceptReportFlags {
  std::string path;                  // a folder holding verdict.json, or the file
  std::vector<std::string> formats;  // --format FMT[=PATH]
  std::optional<std::string> html;
};

}  // namespace

std::vector<record::InputFile> load_all(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("give one or more results files (JSONL written by collbench run/sweep/import)");
  std::vector<record::InputFile> files;
  files.reserve(paths.size());
  for (const auto& p : paths) {
    files.push_back(record::load_input(p));
    for (const auto& w : files.back().warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
  }
  return files;
}

// ---- HTML --------------------------------------------------------------------------------------

report::HtmlContext html_context() {
  report::HtmlContext ctx;
  ctx.generator = fmt::format("collbench {} (git {})", build::kVersion, build::git_sha());
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  ctx.generated_at = buf;
  ctx.command = process_argv();
  return ctx;
}

// Checked before any work, so that a bad --html path fails before anything is written.
void check_html_path(const std::optional<std::string>& html) {
  if (!html) return;
  if (html->empty()) throw InputError("--html: give a file name (e.g. report.html)");
  const fs::path p(*html);
  if (fs::is_directory(p)) throw InputError(fmt::format("--html '{}': is a folder; give a file name", *html));
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent)) {
    throw InputError(fmt::format("--html '{}': folder '{}' does not exist", *html, parent.string()));
  }
}

namespace {

// --html FILE: the "html" writer to FILE, written through a temporary file and a rename (a reader
// never sees half a page), after the other targets, and said on standard error.
void add_html_target(std::vector<report::OutputTarget>& targets, const std::optional<std::string>& html) {
  if (html) targets.push_back(report::OutputTarget{"html", *html, "", true});
}

// ---- tables and comparisons ------------------------------------------------------------------

int run_tables(const ReportFlags& f) {
  std::vector<report::OutputTarget> targets =
      report::parse_output_targets(f.formats, report::cases_writers().names(), "table");
  std::optional<compare::CompareBy> by;
  if (f.compare_by == "auto") {
    if (f.files.size() >= 2) by = compare::CompareBy::run;
  } else if (f.compare_by != "none") {
    by = compare::parse_compare_by(f.compare_by);
  }
  if (f.baseline && !by) throw InputError("--baseline needs a comparison (--compare-by run|backend|algo)");
  check_html_path(f.html);
  add_html_target(targets, f.html);
  std::optional<model::SystemProfile> system;
  if (f.system) system = model::load_system_profile(*f.system, f.sets);
  if (!f.system && !f.sets.empty()) throw InputError("--set needs --system NAME|FILE: the profile it overrides");
  const auto domains = model::choose_ranks_per_domain(f.ranks_per_domain, system ? &*system : nullptr);
  if (!by && tables_can_stream(targets))
    return print_streamed_tables(f.files, targets, domains, system ? &*system : nullptr);
  auto files = load_all(f.files);
  model::place_and_model(files, domains, system ? &*system : nullptr);
  std::optional<compare::Comparison> comparison;
  if (by) comparison = compare::compare_files(files, *by, f.baseline);

  const report::CasesOutput output{&files, comparison ? &*comparison : nullptr, html_context()};
  report::WriterMultiplex<report::CasesOutput>(report::cases_writers(), targets).write(output);
  return 0;
}

// ---- acceptance results ------------------------------------------------------------------------

int run_accept_report(const AcceptReportFlags& f) {
  const std::vector<report::OutputTarget> targets =
      report::parse_output_targets(f.formats, accept::accept_writers().names(), "table");
  check_html_path(f.html);
  fs::path verdict_path(f.path);
  if (fs::is_directory(verdict_path)) {
    verdict_path /= "verdict.json";
    if (!fs::exists(verdict_path)) {
      throw InputError(
          fmt::format("{}: no verdict.json in this folder (give the --out-dir of `collbench accept`, or "
                      "its verdict.json)",
                      f.path));
    }
  } else if (!fs::exists(verdict_path)) {
    throw InputError(
        fmt::format("{}: no such file or folder (give the --out-dir of `collbench accept`, or its "
                    "verdict.json)",
                    f.path));
  }
  std::ifstream in(verdict_path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", verdict_path.string(), std::strerror(errno)));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or a number out of range
    throw InputError(
        fmt::format("{}: not JSON ({}); expected an acceptance verdict (verdict.json of `collbench "
                    "accept --out-dir`)",
                    verdict_path.string(), e.what()));
  }
  const accept::AcceptReport rep = accept::accept_from_json(j, verdict_path.string());

  // Record files for provenance: as written (relative to where accept ran), else next to verdict.json.
  std::vector<record::InputFile> records;
  std::vector<std::string> notes;
  for (const auto& rf : rep.record_files) {
    fs::path p(rf);
    if (!fs::exists(p)) p = verdict_path.parent_path() / fs::path(rf).filename();
    if (!fs::exists(p)) {
      notes.push_back(
          fmt::format("record file '{}' not found (nor next to the verdict): its provenance is missing", rf));
      continue;
    }
    try {
      records.push_back(record::load_input(p.string()));
    } catch (const InputError& e) {
      notes.push_back(fmt::format("record file '{}' not read ({}): its provenance is missing", p.string(), e.what()));
    }
  }
  for (const auto& n : notes) std::fprintf(stderr, "collbench: warning: %s\n", n.c_str());
  report::WriterMultiplex<accept::AcceptReport>(accept::accept_writers(), targets).write(rep);
  if (f.html) {
    const report::OutputTarget html{"html", *f.html, "", true};
    report::write_output(html, accept::render_accept_html(rep, records, html_context(), notes));
  }
  return 0;
}

// The tables and comparisons of `report FILES`.
void add_table_options(CLI::App& app, ReportFlags& f) {
  app.add_option("files", f.files, "Result files (JSONL)");
  add_format_option(app, f.formats, report::cases_writers().names(), "table", "Output");
  app.add_option("--compare-by", f.compare_by,
                 "run, backend, algo or none (default: run when two or more files are given)")
      ->default_str("auto");
  app.add_option("--baseline", f.baseline,
                 "Value of the compared dimension to compare against (a file, backend or algo; default: the first)");
  app.add_option("--html", f.html,
                 "Also write one self-contained HTML page (tables, SVG plots, provenance) to this file");
  app.add_option("--ranks-per-domain", f.ranks_per_domain,
                 "Ranks per scale-up domain for records without a placement (nccl-tests imports); default: "
                 "--system's domain size");
  add_system_option(app, f.system, "System profile: records without a model get its bound and expected value");
  app.add_option(
         "--set", f.sets,
         "Override a profile key, validated as in the file (repeatable): KEY=VALUE, e.g. scale_out.oversubscription=2")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.require_subcommand(0, 1);
  app.footer(
      "Examples:\n"
      "  collbench report results/a.jsonl\n"
      "  collbench report results/a.jsonl results/b.jsonl              # compares the runs, per size\n"
      "  collbench report results/all.jsonl --compare-by algo --baseline ring --format markdown\n"
      "  collbench report weak-scaling results/256.jsonl results/512.jsonl results/1024.jsonl --system gb300-nvl72 "
      "--out report/\n"
      "  collbench report results/a.jsonl --html a.html                 # one self-contained page\n"
      "  collbench report accept accept-out --html accept.html          # acceptance verdicts as a page");
}

// `report accept`.
CLI::App* add_accept_report(CLI::App& app, AcceptReportFlags& a) {
  CLI::App* acc = app.add_subcommand(
      "accept", "An acceptance run's verdicts (verdict.json of `collbench accept --out-dir`): table, Markdown, HTML");
  acc->add_option("path", a.path, "The accept --out-dir folder, or its verdict.json")->required();
  add_format_option(*acc, a.formats, accept::accept_writers().names(), "table", "Output");
  acc->add_option("--html", a.html,
                  "Write one self-contained HTML page (verdicts, chart, provenance from the record files)");
  acc->footer(
      "Example:\n"
      "  mpiexec -n 2 collbench accept cpu-local --out-dir accept-out   # also writes accept-out/verdict.html\n"
      "  collbench report accept accept-out --html accept.html");

  return acc;
}

Action setup_report(CLI::App& app) {
  auto f = std::make_shared<ReportFlags>();
  auto w = std::make_shared<WeakScalingFlags>();
  auto a = std::make_shared<AcceptReportFlags>();
  add_table_options(app, *f);
  CLI::App* ws = add_weak_scaling(app, *w);
  CLI::App* acc = add_accept_report(app, *a);
  return [f, w, ws, a, acc]() -> int {
    if (acc->parsed()) return run_accept_report(*a);
    if (ws->parsed()) return run_weak_scaling(*w);
    return run_tables(*f);
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"report", "Tables, comparisons and weak-scaling reports from result files", 60,
                                  &setup_report, false});

}  // namespace collbench::cli
