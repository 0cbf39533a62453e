// Domain placement (docs/interfaces.md section 2): how ranks group into scale-up domains,
// rack-major. Pure functions shared by the runner, the model and reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collbench {

struct Placement {
  std::vector<int> domain_sizes;  // rack-major: domain d holds ranks [offset(d), offset(d)+size)
  std::string source;             // "domain-sizes", "ranks-per-domain", "system", "host", "single"
  std::vector<int> interleaved;   // rank -> domain, only when ranks are not rack-major (else empty)

  [[nodiscard]] int num_ranks() const;
  [[nodiscard]] int num_domains() const { return static_cast<int>(domain_sizes.size()); }
  [[nodiscard]] int domain_of(int rank) const;
  [[nodiscard]] int domain_offset(int domain) const;
  [[nodiscard]] int largest_domain() const;
  [[nodiscard]] int smallest_domain() const;
  [[nodiscard]] bool uniform() const;
};

// n ranks in domains of m (the last one partial): 256 / 72 -> 72,72,72,40.
Placement placement_from_ranks_per_domain(int num_ranks, int ranks_per_domain);

// Explicit sizes; InputError unless they are positive and sum to num_ranks.
Placement placement_from_sizes(int num_ranks, const std::vector<int>& sizes);

// Groups ranks by a key per rank (host name, fabric clique). Ranks sharing a key must be
// contiguous (rack-major) unless allow_interleaved; an InputError names the offending rank.
Placement placement_from_keys(const std::vector<std::string>& key_per_rank, bool allow_interleaved, std::string source);

// "72,72,72,40" -> {72,72,72,40}
std::vector<int> parse_domain_sizes(const std::string& text);

}  // namespace collbench
