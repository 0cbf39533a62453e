// `collbench import LOG... --out FILE.jsonl`: nccl-tests console logs and -J JSON files become
// collbench records (source: nccl-tests), so existing logs get reports, bounds and gates. Reads
// files only: no MPI, no GPU.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/subcommand.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/git_sha.hpp"
#include "collbench/core/names.hpp"
#include "collbench/model/placement_model.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/nccltests_convert.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/run/session.hpp"

namespace collbench::cli {
namespace {

struct ImportFlags {
  std::vector<std::string> logs;
  std::string out;
  bool force = false;
  std::optional<int> num_ranks;
  std::optional<std::string> collective;
  std::optional<int> ranks_per_domain;
  std::optional<std::string> system;
  std::vector<std::string> sets;
};

// --system: the records' model (bound, expected) on that profile, and the header's system.
void add_models(record::NcclTestsImport& imp, const model::SystemProfile& system) {
  imp.header.system = nlohmann::json{{"name", system.name}, {"digest", system.digest}, {"path", system.path}};
  for (auto& r : imp.cases) {
    std::string why;
    if (auto mf = model::model_fields_for(system, r, why)) {
      r.model = std::move(mf);
    } else {
      r.extra["model_note"] = why;
    }
  }
}

int run_import(const ImportFlags& f) {
  if (f.out.empty()) throw InputError("--out FILE.jsonl is required");
  // Checked first (and again when opening): import has no --resume, so the writer's own hint
  // would mislead.
  struct stat st {};
  if (!f.force && !names_open_descriptor(output_target(f.out)) && ::stat(f.out.c_str(), &st) == 0 && st.st_size > 0) {
    throw InputError(fmt::format(
        "output file '{}' exists and is not empty; pass --force to replace it, or choose another --out", f.out));
  }
  record::NcclTestsConvertOptions opt;
  opt.run_id = run::new_run_id();
  opt.started_at = run::utc_now_iso8601();
  opt.tool_version = build::kVersion;
  opt.git_sha = build::git_sha();
  opt.backends_built = build::backends_built();
  opt.argv = process_argv();
  opt.num_ranks = f.num_ranks;
  if (f.collective) opt.collective = *f.collective;
  std::optional<model::SystemProfile> system;
  if (f.system) system = model::load_system_profile(*f.system, f.sets);
  if (!f.system && !f.sets.empty()) throw InputError("--set needs --system NAME|FILE: the profile it overrides");
  const auto domains = model::choose_ranks_per_domain(f.ranks_per_domain, system ? &*system : nullptr);
  opt.ranks_per_domain = domains.ranks_per_domain;
  opt.placement_from = domains.from;

  std::vector<record::NcclTestsLog> logs;
  for (const auto& path : f.logs) {
    auto parsed = record::load_nccl_tests_file(path);
    if (parsed.empty()) throw InputError(fmt::format("{}: no nccl-tests results in this file", path));
    for (auto& log : parsed) logs.push_back(std::move(log));
  }
  auto imp = record::import_nccl_tests(logs, opt);
  if (system) add_models(imp, *system);
  for (const auto& w : imp.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
  if (imp.cases.empty()) {
    throw InputError(
        fmt::format("nothing to import: no measurement of a collective collbench records in {}", join(f.logs)));
  }
  // Open the output only now, so that a bad log leaves no half-written file behind.
  record::JsonlWriter writer(f.out, f.force ? record::OpenMode::force : record::OpenMode::create);
  // One line and one write(2) per record, as a run writes them, but one fsync for the file: the
  // logs can be imported again, and a sync per record made 10,000 rows take a minute
  // (docs/results-format.md; issue 37 item 8). The summary is printed once the file is synced.
  writer.write_unsynced(record::to_json(imp.header));
  for (const auto& r : imp.cases) writer.write_unsynced(record::to_json(r));
  writer.sync();
  std::printf(
      "# imported %zu case(s) from %zu log(s) into %s%s\n", imp.cases.size(), logs.size(), f.out.c_str(),
      imp.duplicates_dropped > 0
          ? fmt::format(" ({} repeated row(s) dropped: one record per case key)", imp.duplicates_dropped).c_str()
          : "");
  return 0;
}

Action setup_import(CLI::App& app) {
  auto f = std::make_shared<ImportFlags>();
  app.add_option("logs", f->logs, "nccl-tests console logs or -J JSON files")->required();
  app.add_option("--out,-o", f->out, "Output results file (JSONL)")->required();
  app.add_flag("--force", f->force, "Replace an existing non-empty output file");
  app.add_option("--num-ranks", f->num_ranks, "Rank count, for logs that do not say (no device list)");
  app.add_option("--collective", f->collective,
                 "Collective (collbench name), for logs whose collective cannot be inferred");
  app.add_option("--ranks-per-domain", f->ranks_per_domain,
                 "Ranks per scale-up domain, in rank order, last domain partial (default: --system's domain size; "
                 "without either the placement is unknown: one domain of all ranks)");
  add_system_option(app, f->system,
                    "System profile the logs were measured on: records get its bound and expected value");
  app.add_option(
         "--set", f->sets,
         "Override a profile key, validated as in the file (repeatable): KEY=VALUE, e.g. scale_out.oversubscription=2")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.footer(
      "Each table row becomes up to two cases (out-of-place, in-place) with the printed time as p50, and the\n"
      "printed algbw and busbw (checked against size and time). Placement: --ranks-per-domain, else --system's\n"
      "domain size, else unknown (one domain of all ranks).\n"
      "Examples:\n"
      "  collbench import all_reduce_perf.log --out results/nccl-allreduce.jsonl\n"
      "  collbench import run-256.log run-512.log run-1024.log --out results/nccl.jsonl --force\n"
      "  collbench import run-256.log run-512.log --system gb300-nvl72 --out results/nccl.jsonl   # 72 per rack");
  return [f]() -> int { return run_import(*f); };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"import", "Convert nccl-tests logs (text or -J JSON) into collbench records", 70,
                                  &setup_import, false});

}  // namespace collbench::cli
