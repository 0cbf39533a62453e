// The runner's results file, run header and stored configuration (see results_file.hpp).
#include "collbench/run/results_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/git_sha.hpp"
#include "collbench/core/names.hpp"
#include "collbench/run/runner.hpp"

namespace collbench::run {

std::string describe_config_difference(const nlohmann::json& stored, const nlohmann::json& now) {
  // Values from YAML may hold bytes that are not UTF-8: print them as the results writer does.
  const auto text = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::vector<std::string> parts;
  if (!stored.is_object()) return "the stored configuration is not an object";
  for (const auto& [key, value] : now.items()) {
    const auto it = stored.find(key);
    if (it == stored.end()) {
      parts.push_back(fmt::format("'{}' is not in the file", key));
    } else if (*it != value) {
      if (key == "cases" && it->is_array() && value.is_array()) {
        if (it->size() != value.size()) {
          parts.push_back(fmt::format("{} case(s) in the file vs {} now", it->size(), value.size()));
          continue;
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
          if ((*it)[i] == value[i]) continue;
          std::vector<std::string> fields;
          for (const auto& [field, v] : value[i].items()) {
            const auto f = (*it)[i].find(field);
            if (f == (*it)[i].end() || *f != v) {
              fields.push_back(fmt::format("{} {} vs {}", field, f == (*it)[i].end() ? "(absent)" : text(*f), text(v)));
            }
          }
          parts.push_back(fmt::format("case {}: {}", i, join(fields, ", ")));
          break;  // the first differing case is enough to see why
        }
      } else {
        parts.push_back(fmt::format("{} {} vs {}", key, text(*it), text(value)));
      }
    }
  }
  for (const auto& [key, value] : stored.items()) {
    if (!now.contains(key)) parts.push_back(fmt::format("'{}' is only in the file", key));
  }
  return parts.empty() ? "no field differs" : join(parts, "; ");
}

std::optional<std::string> fault_difference(const std::optional<std::string>& stored, const std::string& now) {
  const std::string before = stored.value_or("");
  if (before == now) return std::nullopt;
  const auto show = [](const std::string& f) { return f.empty() ? std::string("none") : "'" + f + "'"; };
  return fmt::format("COLLBENCH_FAULT {} in the file vs {} now", show(before), show(now));
}

ResultsFile open_results_file(const Control& control, const std::optional<std::string>& out_path, record::OpenMode mode,
                              const nlohmann::json& config, const std::string& fault) {
  ResultsFile file;
  on_root_agreed(control, [&] {
    if (!out_path) return;
    if (mode == record::OpenMode::resume && names_open_descriptor(output_target(*out_path))) {
      // Before reading it: reading a pipe's descriptor would wait for input that never comes.
      throw InputError(
          fmt::format("--resume: '{}' is an open descriptor, not a file to continue; give --out a file", *out_path));
    }
    if (mode == record::OpenMode::resume && ::access(out_path->c_str(), F_OK) == 0) {
      const auto existing = record::read_results(*out_path);
      if (!existing.header && !existing.cases.empty()) {
        throw InputError(
            fmt::format("--resume: '{}' holds cases but no run header, so its configuration cannot "
                        "be checked; use --force to replace it or another --out file",
                        *out_path));
      }
      if (existing.header && existing.header->config != config) {
        throw InputError(
            fmt::format("--resume: '{}' was written by a different configuration ({}); use --force "
                        "to replace it or another --out file",
                        *out_path, describe_config_difference(existing.header->config, config)));
      }
      if (existing.header) {
        if (const auto diff = fault_difference(existing.header->fault, fault)) {
          throw InputError(
              fmt::format("--resume: '{}' was written with other injected faults ({}); use --force to replace it "
                          "or another --out file",
                          *out_path, *diff));
        }
      }
      file.has_header = existing.header.has_value();
      for (const auto& rec : existing.cases) {
        // A failure stays visible in the exit code of every later --resume (exit 1).
        if (file.done_keys.insert(rec.case_key).second && rec.status == "failed") ++file.failed_before;
      }
      for (const auto& w : existing.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
    }
    file.writer = std::make_unique<record::JsonlWriter>(*out_path, mode);
  });
  return file;
}

namespace {

// Library versions and per-rank devices from one backend's provenance, where not yet known.
void add_provenance(record::RunHeader& header, const std::map<std::string, std::string>& prov) {
  const auto get = [&prov](const std::string& k) -> std::optional<std::string> {
    const auto f = prov.find(k);
    return f == prov.end() || f->second.empty() ? std::nullopt : std::optional<std::string>(f->second);
  };
  if (!header.nccl_version) header.nccl_version = get("nccl_version");
  if (!header.cuda_runtime) header.cuda_runtime = get("cuda_runtime");
  if (!header.cuda_driver) header.cuda_driver = get("cuda_driver");
  for (auto& h : header.hosts) {
    const std::string prefix = "rank." + std::to_string(h.rank) + ".";
    if (!h.gpu_name) h.gpu_name = get(prefix + "gpu_name");
    if (!h.gpu_uuid) h.gpu_uuid = get(prefix + "gpu_uuid");
    if (!h.pci_bus_id) h.pci_bus_id = get(prefix + "pci_bus_id");
    if (!h.nic) h.nic = get(prefix + "nic");
  }
}

}  // namespace

record::RunHeader make_run_header(const HeaderFacts& facts, const std::vector<const backend::Backend*>& backends) {
  record::RunHeader header;
  header.run_id = facts.run_id;
  header.started_at = utc_now_iso8601();
  header.tool_version = build::kVersion;
  header.git_sha = build::git_sha();
  header.backends_built = build::backends_built();
  header.argv = facts.argv;
  header.config = facts.config;
  header.launcher = facts.info->launcher;
  header.mpi_library = backend::mpi_library_version();
  header.hosts = facts.info->hosts;
  for (const auto* b : backends) add_provenance(header, b->provenance());
  header.env = relevant_env();
  const auto* system = facts.system;
  header.system = system ? nlohmann::json{{"name", system->name}, {"digest", system->digest}, {"path", system->path}}
                         : nlohmann::json(nullptr);
  if (facts.fault) header.fault = *facts.fault;
  header.simulated = facts.simulated;
  return header;
}

nlohmann::json sweep_config_json(const plan::Sweep& sweep, const Placement& placement, const std::string& progress) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : sweep.cases) {
    cases.push_back({{"collective", c.collective},
                     {"redop", to_string(c.redop)},
                     {"dtype", to_string(c.dtype)},
                     {"backend", c.backend},
                     {"algo", c.algo},
                     {"scope", to_string(c.scope)},
                     {"in_place", c.in_place},
                     {"timing", to_string(c.timing)},
                     {"buffers", c.buffers},
                     {"graph", c.graph},
                     {"root", c.root},
                     {"check", c.check},
                     {"bytes", c.bytes},
                     {"warmup", c.stop.warmup},
                     {"min_iters", c.stop.min_iters},
                     {"max_iters", c.stop.max_iters},
                     {"min_time_s", c.stop.min_time_s},
                     {"max_time_s", c.stop.max_time_s},
                     {"max_noise", c.stop.max_noise},
                     {"budget_s", c.stop.budget_s},
                     {"batch", c.stop.batch},
                     {"params", c.params}});
    // Only when set, so that files written before the overlap mode still --resume.
    if (!c.overlap.empty()) cases.back()["overlap"] = c.overlap;
    if (c.overlap_chunks > 0) cases.back()["overlap_chunks"] = c.overlap_chunks;
  }
  return {{"name", sweep.name},
          {"source", sweep.source},
          {"system", sweep.system ? nlohmann::json(*sweep.system) : nlohmann::json(nullptr)},
          {"domain_sizes", placement.domain_sizes},
          {"placement_source", placement.source},
          {"progress", progress},
          {"cases", cases}};
}

}  // namespace collbench::run
