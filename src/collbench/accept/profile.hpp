// Acceptance profiles (profiles/acceptance/*.yaml): a named suite of checks, each a case
// (collective, sizes, dtype, algorithm, scope, placement) with a threshold (fraction of the
// model's bound or expected value, absolute GB/s floors, a latency ceiling), a number of
// repetitions and a policy (median or best of N). Strict YAML validation: an unknown key is an
// InputError naming file, line, key and the closest valid key. Pure C++ (yaml-cpp); the
// measuring lives in the runner, the judging in judge.hpp. docs/acceptance.md has the schema.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/plan/case.hpp"

namespace collbench::accept {

enum class Policy { median, best };
std::string_view to_string(Policy p);  // "median", "best"

// Every present limit must hold. Fractions compare busbw with the model's busbw (equivalently
// the bound/expected time with the measured time); floors are GB/s (1e9 B/s); max_time_us caps
// the measured time (latency checks).
struct Threshold {
  std::optional<double> fraction_of_bound;
  std::optional<double> fraction_of_expected;
  std::optional<double> min_busbw_gbps;
  std::optional<double> min_algbw_gbps;
  std::optional<double> max_time_us;
  // Concurrent families (ep-dp-concurrent): the largest interference ratio t_both / max(t_ep,
  // t_dp) accepted (1.0 = the parts run fully at once; 2.0 = serialized, for equal parts).
  std::optional<double> max_interference;
  // A reference result for cross-domain checks beyond the model's checked range (docs/acceptance.md,
  // "Beyond the checked range"): a site baseline busbw, GB/s, and where it comes from. There,
  // fraction_of_expected is judged against this instead of the unchecked expected value.
  std::optional<double> reference_busbw_gbps;
  std::string reference_source;

  [[nodiscard]] bool empty() const {
    return !fraction_of_bound && !fraction_of_expected && !min_busbw_gbps && !min_algbw_gbps && !max_time_us &&
           !max_interference;
  }
  [[nodiscard]] bool has_absolute() const {
    return min_busbw_gbps || min_algbw_gbps || max_time_us || max_interference;
  }
};

struct Check {
  std::string name;
  std::string description;
  plan::Case base;                   // everything but the size (bytes = 0 here)
  std::vector<std::uint64_t> sizes;  // each size is judged on its own
  Threshold threshold;
  int repetitions = 3;
  Policy policy = Policy::median;
  // A waived case, or a library that ran another algorithm than base.algo (silent fallback),
  // is a FAIL rather than WAIVED.
  bool require_algo = false;
  // Placement of this check (else the command line's, else the system profile's or host).
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;  // "72,72,72,40"
  // sendrecv with pairing round-robin or rail and no `round`: every round runs, the check
  // judges the slowest round (and names its slowest pair).
  bool all_rounds = false;
  // With all_rounds: measure only this many of the rounds, spread evenly over the round robin
  // (core/pairing.hpp sampled_rounds; locate's --pair-rounds); 0 = every round.
  int sampled_rounds = 0;
  int line = 0;  // 1-based line of the entry in the profile
};

// Rank counts the profile is meant for; other counts are refused (exit 2) before running.
struct Requirements {
  int min_ranks = 1;
  std::optional<int> max_ranks;
  int ranks_multiple_of = 1;
};

struct AcceptanceProfile {
  std::string name;
  std::string description;
  std::optional<std::string> system;  // system profile for bounds (name or path)
  // MPI progress for the runs (auto | spin | yield); the command line's --progress wins.
  std::optional<std::string> progress;
  Requirements requirements;
  std::vector<Check> checks;
  std::string source;  // file path
};

// Parses profile text; `origin` names the file in messages ("FILE:LINE: key 'K': ...").
AcceptanceProfile parse_acceptance_profile(std::string_view yaml_text, const std::string& origin);

// By name (profiles/acceptance/NAME.yaml in the profile search directories) or by path
// (anything with '/' or ending in .yaml/.yml). InputError listing the known names otherwise.
AcceptanceProfile load_acceptance_profile(const std::string& name_or_path);

// The shipped profile names (sorted), from every search directory.
std::vector<std::string> list_acceptance_profiles();

// Keys accepted in a check entry and in `defaults:` (documentation and tests).
const std::vector<std::string>& check_keys();
const std::vector<std::string>& threshold_keys();

// The InputError message for a rank count the profile does not accept, or empty.
std::string rank_count_problem(const AcceptanceProfile& profile, int num_ranks);

}  // namespace collbench::accept
