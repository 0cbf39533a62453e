// Sweep files (docs/interfaces.md section 5): YAML -> a named list of Cases. Every key is validated
// (unknown keys suggest the closest valid one); list values expand as a cross product in file
// order (the first listed key varies slowest). Pure C++ (yaml-cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/plan/case.hpp"

namespace collbench::plan {

struct Sweep {
  std::string name;
  std::string description;
  std::optional<std::string> system;  // profile name or file, for bounds
  std::vector<Case> cases;
  std::string source;  // file path, or "<command line>"
};

Sweep load_sweep_file(const std::string& path);
Sweep parse_sweep(const std::string& yaml_text, const std::string& source_name);

// Keys accepted in `defaults:` and in each case entry.
const std::vector<std::string>& sweep_case_keys();

// Estimated bytes of buffer memory per rank for a case on n ranks (send + recv).
std::uint64_t estimated_buffer_bytes(const Case& c, int num_ranks);

}  // namespace collbench::plan
