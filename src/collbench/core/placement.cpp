// Placement arithmetic.
#include "collbench/core/placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string>
#include <unordered_map>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"

namespace collbench {

int Placement::num_ranks() const {
  return std::accumulate(domain_sizes.begin(), domain_sizes.end(), 0);
}

int Placement::domain_of(int rank) const {
  if (!interleaved.empty()) return interleaved.at(static_cast<std::size_t>(rank));
  int offset = 0;
  for (std::size_t d = 0; d < domain_sizes.size(); ++d) {
    offset += domain_sizes[d];
    if (rank < offset) return static_cast<int>(d);
  }
  throw InputError(fmt::format("rank {} is outside the placement of {} ranks", rank, num_ranks()));
}

int Placement::domain_offset(int domain) const {
  return std::accumulate(domain_sizes.begin(), domain_sizes.begin() + domain, 0);
}

int Placement::largest_domain() const {
  return *std::max_element(domain_sizes.begin(), domain_sizes.end());
}
int Placement::smallest_domain() const {
  return *std::min_element(domain_sizes.begin(), domain_sizes.end());
}
bool Placement::uniform() const {
  return largest_domain() == smallest_domain();
}

Placement placement_from_ranks_per_domain(int num_ranks, int ranks_per_domain) {
  if (ranks_per_domain <= 0) {
    throw InputError(fmt::format("--ranks-per-domain {}: must be a positive number of ranks", ranks_per_domain));
  }
  Placement p;
  p.source = "ranks-per-domain";
  for (int left = num_ranks; left > 0; left -= ranks_per_domain)
    p.domain_sizes.push_back(std::min(left, ranks_per_domain));
  if (p.domain_sizes.empty()) p.domain_sizes.push_back(0);
  return p;
}

Placement placement_from_sizes(int num_ranks, const std::vector<int>& sizes) {
  if (sizes.empty()) throw InputError("--domain-sizes: empty list");
  for (int s : sizes) {
    if (s <= 0) throw InputError(fmt::format("--domain-sizes: size {} must be positive", s));
  }
  const int total = std::accumulate(sizes.begin(), sizes.end(), 0);
  if (total != num_ranks) {
    throw InputError(fmt::format("--domain-sizes {} sums to {} ranks but the run has {} ranks", fmt::join(sizes, ","),
                                 total, num_ranks));
  }
  Placement p;
  p.domain_sizes = sizes;
  p.source = "domain-sizes";
  return p;
}

Placement placement_from_keys(const std::vector<std::string>& key_per_rank, bool allow_interleaved,
                              std::string source) {
  Placement p;
  p.source = std::move(source);
  std::unordered_map<std::string, int> seen;  // key -> domain: O(N) for N ranks on N hosts, too
  std::vector<int> domain_of_rank;
  bool contiguous = true;
  for (std::size_t r = 0; r < key_per_rank.size(); ++r) {
    const auto& key = key_per_rank[r];
    const auto [it, added] = seen.try_emplace(key, static_cast<int>(seen.size()));
    if (added) {
      p.domain_sizes.push_back(1);
      domain_of_rank.push_back(it->second);
      continue;
    }
    const int d = it->second;
    if (d != domain_of_rank.back()) {
      if (!allow_interleaved) {
        throw InputError(
            fmt::format("ranks are not rack-major: rank {} is in domain '{}' ({}) but ranks of that domain are not "
                        "contiguous; launch ranks domain by domain, or pass --allow-interleaved",
                        r, key, p.source));
      }
      contiguous = false;
    }
    ++p.domain_sizes[static_cast<std::size_t>(d)];
    domain_of_rank.push_back(d);
  }
  if (!contiguous) p.interleaved = std::move(domain_of_rank);
  return p;
}

std::vector<int> parse_domain_sizes(const std::string& text) {
  std::vector<int> sizes;
  for (const auto& item : split_list(text, "--domain-sizes")) {
    int v = 0;
    const auto res = std::from_chars(item.data(), item.data() + item.size(), v);
    if (res.ec != std::errc{} || res.ptr != item.data() + item.size() || v <= 0) {
      throw InputError(
          fmt::format("--domain-sizes '{}': '{}' is not a positive integer (expected e.g. 72,72,72,40)", text, item));
    }
    sizes.push_back(v);
  }
  return sizes;
}

}  // namespace collbench
