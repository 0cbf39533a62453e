#include "collbench/step/ep_placement.hpp"

#include <fmt/format.h>

#include "collbench/core/error.hpp"

namespace collbench::step {

std::string_view to_string(Packing p) {
  return p == Packing::ep_aligned ? "ep-aligned" : "rack-major";
}

Packing parse_packing(const std::string& text) {
  if (text == "ep-aligned") return Packing::ep_aligned;
  if (text == "rack-major") return Packing::rack_major;
  throw InputError(fmt::format("--packing '{}': accepted: ep-aligned, rack-major", text));
}

namespace {

int largest_divisor_at_most(int n, int limit) {
  for (int d = limit; d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// Groups [k ep, (k + 1) ep) whose members lie in more than one block of `per_domain` ranks.
int count_straddling(int gpus, int ep, int per_domain) {
  int n = 0;
  for (int first = 0; first < gpus; first += ep) {
    if (first / per_domain != (first + ep - 1) / per_domain) ++n;
  }
  return n;
}

}  // namespace

EpPlacement place_ep_groups(int gpus, int ep, int domain_size, Packing packing) {
  if (ep <= 0 || gpus % ep != 0) {
    throw InputError(fmt::format("--gpus {}: not a whole number of EP groups of {}", gpus, ep));
  }
  EpPlacement p;
  p.packing = packing;
  p.gpus = gpus;
  p.ep = ep;
  p.domain_size = domain_size > 0 ? domain_size : gpus;
  p.groups = gpus / ep;
  p.fits = ep <= p.domain_size;
  if (packing == Packing::rack_major) {
    p.used_per_domain = p.domain_size;
  } else {
    p.used_per_domain = p.fits ? p.domain_size / ep * ep : largest_divisor_at_most(ep, p.domain_size);
  }
  p.domains = (gpus + p.used_per_domain - 1) / p.used_per_domain;
  p.straddling = count_straddling(gpus, ep, p.used_per_domain);
  return p;
}

std::string describe(const EpPlacement& p) {
  const std::string head =
      fmt::format("{} EP{} group{} ({}) in {} domain{} of {} of {} GPUs", p.groups, p.ep, p.groups == 1 ? "" : "s",
                  to_string(p.packing), p.domains, p.domains == 1 ? "" : "s", p.used_per_domain, p.domain_size);
  const std::string idle = p.idle_per_domain() > 0 ? fmt::format(", {} idle per domain", p.idle_per_domain()) : "";
  if (p.straddling == 0) return head + idle + ", every EP group inside one domain";
  if (!p.fits) {
    return head + idle +
           fmt::format(
               ": EP{} does not fit a {}-GPU domain, every group spans {} domains and its EP phases cross "
               "the network",
               p.ep, p.domain_size, p.ep / p.used_per_domain);
  }
  return head + idle +
         fmt::format(
             ": {} of {} EP groups straddle two domains and their EP phases cross the network "
             "(--packing ep-aligned keeps them inside)",
             p.straddling, p.groups);
}

}  // namespace collbench::step
