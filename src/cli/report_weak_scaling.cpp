// `collbench report weak-scaling FILES...`: the weak-scaling report folder (report.md,
// report.json, PNG plots drawn by the plotting package when matplotlib is available) and its
// --html page (docs/report.md). Reads result files only: no MPI, no GPU.
#include "cli/report_weak_scaling.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/out_dir.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/limits.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/model/placement_model.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/report/html.hpp"
#include "collbench/report/markdown.hpp"
#include "collbench/report/weak_scaling_json.hpp"
#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::cli {
namespace {

namespace fs = std::filesystem;

std::vector<int> parse_ranks(const std::string& text) {
  if (text == "none" || text.empty()) return {};
  std::vector<int> out;
  for (const auto& item : split_list(text, "--ranks")) {
    int v = 0;
    if (const auto why = count_problem(item, kMaxRanks, v)) {
      throw InputError(fmt::format("--ranks '{}': '{}' {} (expected e.g. 256,512,1024, or none)", text, item, *why));
    }
    out.push_back(v);
  }
  return out;
}

// ---- weak scaling ----------------------------------------------------------------------------

// Runs argv with extra environment variables; returns the exit status and stdout (stderr passes
// through, so the plotting package's warnings reach the user).
int run_capture(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                std::string& stdout_text, bool quiet_stderr) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) return -1;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    return -1;
  }
  if (pid == 0) {
    ::dup2(pipe_fd[1], STDOUT_FILENO);
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    if (quiet_stderr) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      if (null_fd >= 0) ::dup2(null_fd, STDERR_FILENO);
    }
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fd[0], buf, sizeof buf);
    if (n > 0) {
      stdout_text.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(pipe_fd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Plotter {
  std::string python;
  std::string package_dir;  // the folder holding collbench_plot/
  std::string why_not;      // empty when usable
};

constexpr const char* kInstallHint =
    "install matplotlib for it: 'sudo apt-get install python3-matplotlib' (Debian/Ubuntu; collbench then uses "
    "/usr/bin/python3) or 'python3 -m pip install matplotlib' (and set COLLBENCH_PYTHON to that python3)";

Plotter find_plotter() {
  Plotter p;
  if (const char* env = std::getenv("COLLBENCH_PYTHON"); env && *env) {
    p.python = env;
  } else {
    p.python = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  }
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("COLLBENCH_PLOTTING_DIR"); env && *env) candidates.emplace_back(env);
  for (const auto& d : data_search_dirs("plotting")) candidates.push_back(d);
  for (const auto& c : candidates) {
    if (fs::exists(fs::path(c) / "collbench_plot" / "__main__.py")) {
      p.package_dir = c;
      break;
    }
  }
  if (p.package_dir.empty()) {
    p.why_not =
        fmt::format("plots not drawn: the plotting package (collbench_plot) was not found in {}", join(candidates));
    return p;
  }
  std::string ignored;
  const int rc = run_capture({p.python, "-c", "import matplotlib"}, {}, ignored, true);
  if (rc != 0) {
    p.why_not = fmt::format("plots not drawn: {} {}; {}", p.python, rc == 127 ? "was not found" : "has no matplotlib",
                            kInstallHint);
  }
  return p;
}

// Runs one plotting command; returns the files it wrote, or leaves a note.
std::vector<std::string> plot(const Plotter& p, const std::vector<std::string>& args, std::vector<std::string>& notes) {
  std::vector<std::string> argv{p.python, "-m", "collbench_plot"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string pythonpath = p.package_dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  std::string out;
  const int rc = run_capture(argv, {{"PYTHONPATH", pythonpath}, {"MPLBACKEND", "Agg"}}, out, false);
  if (rc != 0) {
    notes.push_back(fmt::format("`python3 -m collbench_plot {}` failed (exit {})", args.front(), rc));
    return {};
  }
  std::vector<std::string> paths;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(pos, end - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) paths.push_back(line);
    pos = end + 1;
  }
  return paths;
}

// The report's options from the flags (profiles loaded, --set applied where it belongs).
scaling::WeakScalingOptions weak_scaling_options(const WeakScalingFlags& f) {
  scaling::WeakScalingOptions opt;
  opt.requested_ranks = parse_ranks(f.ranks);
  opt.metric = scaling::parse_metric(f.metric);
  opt.seed = f.seed;
  opt.resamples = f.resamples;
  opt.calibrate_at = f.calibrate_at;
  opt.base = f.base;
  opt.anomaly_below_pct = f.anomaly_below;  // default: 40 on GPU profiles, off on CPU ones
  opt.packing = scaling::parse_packing(f.packing);
  opt.allow_mixed_progress = f.allow_mixed_progress;
  // --set overrides the profile projections use (--project-onto's, else --system's).
  if (f.system)
    opt.system = model::load_system_profile(*f.system, f.project_onto ? std::vector<std::string>{} : f.sets);
  if (f.project_onto) opt.project_onto = model::load_system_profile(*f.project_onto, f.sets);
  if (!f.system && !f.project_onto && !f.sets.empty()) {
    throw InputError("--set needs --system or --project-onto: the profile it overrides");
  }
  return opt;
}

// The busbw and per-rank plots, only where the records hold what they draw (imports have no
// per-rank times), so that a failure of the plotting package is always worth a warning.
void draw_record_plots(const Plotter& plotter, const std::vector<record::InputFile>& files, const fs::path& dir,
                       report::PlotLinks& links, std::vector<std::string>& written, std::vector<std::string>& notes) {
  std::vector<std::string> inputs;
  for (const auto& file : files) inputs.push_back(file.path);
  bool any_busbw = false, any_per_rank = false;
  for (const auto& file : files) {
    for (const auto& r : file.cases) {
      any_busbw |= r.status == "ok" && r.bytes > 0 && r.busbw_gbps > 0.0;
      any_per_rank |= r.per_rank.has_value() && !r.per_rank->mean_us.empty();
    }
  }
  std::vector<std::string> kinds;
  if (any_busbw) kinds.emplace_back("busbw");
  if (any_per_rank) kinds.emplace_back("rank-heatmap");
  for (const auto& kind : kinds) {
    std::vector<std::string> args{kind};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"--out", dir.string(), "--format", "png"});
    for (const auto& path : plot(plotter, args, notes)) {
      links.other.push_back(fs::path(path).filename().string());
      written.push_back(path);
    }
  }
}

// Every plot of the report (unless --no-plots or no plotting package): links for the Markdown,
// paths into `written`.
report::PlotLinks draw_plots(const WeakScalingFlags& f, const scaling::WeakScalingReport& rep,
                             const std::vector<record::InputFile>& files, const fs::path& dir,
                             const fs::path& json_path, std::vector<std::string>& written) {
  report::PlotLinks links;
  links.weak_scaling.assign(rep.groups.size(), "");
  if (f.no_plots) {
    links.note = "plots not drawn (--no-plots)";
    return links;
  }
  const Plotter plotter = find_plotter();
  if (!plotter.why_not.empty()) {
    links.note = plotter.why_not;
    std::fprintf(stderr, "collbench: %s\n", plotter.why_not.c_str());
    return links;
  }
  std::vector<std::string> notes;
  const auto ws = plot(plotter, {"weak-scaling", json_path.string(), "--out", dir.string(), "--format", "png"}, notes);
  for (const auto& path : ws) {
    const std::string name = fs::path(path).filename().string();
    for (std::size_t gi = 0; gi < rep.groups.size(); ++gi) {
      const std::string prefix = report::weak_scaling_plot_prefix(gi);
      if (name.rfind(prefix + "_", 0) == 0 || name.rfind(prefix + ".", 0) == 0) links.weak_scaling[gi] = name;
    }
    written.push_back(path);
  }
  draw_record_plots(plotter, files, dir, links, written, notes);
  if (!notes.empty()) {
    links.note = fmt::format("some plots are missing: {}", join(notes, "; "));
    std::fprintf(stderr, "collbench: warning: %s\n", links.note.c_str());
  }
  return links;
}

}  // namespace

int run_weak_scaling(const WeakScalingFlags& f) {
  const scaling::WeakScalingOptions opt = weak_scaling_options(f);
  check_html_path(f.html);
  const auto domains = model::choose_ranks_per_domain(f.ranks_per_domain, opt.system ? &*opt.system : nullptr);
  auto files = load_all(f.files);
  // Placement only: the report computes bounds from --system itself (and says so per point).
  model::place_and_model(files, domains, nullptr);
  const scaling::WeakScalingReport rep = scaling::build_weak_scaling(files, opt);

  const fs::path dir(f.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw InputError(
        fmt::format("--out '{}': cannot create the folder ({})", f.out, ec ? ec.message() : "not a folder"));
  }
  const fs::path json_path = dir / "report.json";
  const fs::path md_path = dir / "report.md";
  write_file_checked(json_path.string(), report::weak_scaling_json(rep).dump(2) + "\n");
  std::vector<std::string> written{md_path.string(), json_path.string()};
  const report::PlotLinks links = draw_plots(f, rep, files, dir, json_path, written);
  write_file_checked(md_path.string(), report::render_weak_scaling_markdown(rep, links));
  if (f.html) {
    write_file_atomic(*f.html, report::render_weak_scaling_html(rep, files, html_context()));
    written.push_back(*f.html);
  }

  std::printf("# %s: %zu group(s) from %zu file(s)\n", rep.title.c_str(), rep.groups.size(), files.size());
  if (!rep.projection_status.empty()) std::printf("# %s\n", rep.projection_status.c_str());
  for (const auto& w : rep.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
  for (const auto& p : written) std::printf("%s\n", p.c_str());
  return 0;
}

// `report weak-scaling` and its flags.
CLI::App* add_weak_scaling(CLI::App& app, WeakScalingFlags& w) {
  CLI::App* ws =
      app.add_subcommand("weak-scaling", "Weak-scaling report across rank counts: Markdown, JSON, PNG plots");
  ws->add_option("files", w.files, "Result files at several rank counts (JSONL)")->required();
  add_system_option(*ws, w.system, "System profile the records were measured on, for bounds and projections");
  ws->add_option("--project-onto", w.project_onto,
                 "Project the measurements onto this system profile (explicitly cross-system; said in the title)");
  ws->add_option("--ranks", w.ranks, "Rank counts to report; those not measured are projected (or 'none')")
      ->default_str("256,512,1024");
  ws->add_option("--calibrate-at", w.calibrate_at,
                 "Calibrate projections on the point at this N (default: the largest measured N) and project every "
                 "requested N above it, measured or not (a projection beside the points it predicts)")
      ->check(CLI::PositiveNumber);
  ws->add_option("--set", w.sets,
                 "Override a key of the projection profile (--project-onto's, else --system's), validated as in the "
                 "file (repeatable): KEY=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  ws->add_option("--base", w.base, "Reference point of E(N): the measured point at this N (default: the smallest N)")
      ->check(CLI::PositiveNumber);
  ws->add_option("--ranks-per-domain", w.ranks_per_domain,
                 "Ranks per scale-up domain for records without a placement (nccl-tests imports); default: "
                 "--system's domain size");
  ws->add_option("--anomaly-below", w.anomaly_below,
                 "Flag measured points below this % of their bound as anomalies, left out of calibration (0: off; "
                 "default 40, off on CPU profiles)");
  ws->add_option("--packing", w.packing,
                 "Packing of projected points: full (whole domains only), even (ceil(N/M) equal domains) or partial "
                 "(full domains and a partial last one)")
      ->default_str("full");
  ws->add_flag("--allow-mixed-progress", w.allow_mixed_progress,
               "Compute E(N) across points measured with different progress modes (spin, yield); without it such "
               "a point has no E(N)");
  ws->add_option("--metric", w.metric, "Per-GPU metric of E(N): busbw or time")->default_str("busbw");
  ws->add_option("--out", w.out, "Output folder (report.md, report.json, *.png)")->default_str("weak-scaling-report");
  ws->add_option("--seed", w.seed, "Seed of the bootstrap")->default_str("1");
  ws->add_option("--resamples", w.resamples, "Bootstrap resamples")->default_str("2000");
  ws->add_flag("--no-plots", w.no_plots, "Write report.md and report.json only");
  ws->add_option("--html", w.html, "Also write the report as one self-contained HTML page (inline SVG plots)");
  ws->footer(
      "E(N) = per-GPU busbw(N) / busbw(N0), N0 the smallest measured N (or --base), with a 95% bootstrap interval;\n"
      "rank counts of --ranks without a measurement are projected from the model (docs/report.md), on whole domains\n"
      "unless --packing says otherwise. Plots need matplotlib:\n"
      "  sudo apt-get install python3-matplotlib   or   python3 -m pip install matplotlib\n"
      "Examples:\n"
      "  collbench report weak-scaling results/n256.jsonl results/n512.jsonl results/n1024.jsonl --system gb300-nvl72 "
      "--out ws/\n"
      "  collbench report weak-scaling results/n1.jsonl results/n2.jsonl --system cpu-local --ranks none --no-plots");

  return ws;
}

}  // namespace collbench::cli
