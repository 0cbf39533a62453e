// Where a step's GPUs sit on scale-up domains (docs/step.md, "EP placement"): EP groups are
// consecutive ranks, and each must stay inside one NVLink domain when it fits, as NVIDIA's
// DeepSeek-V3 recipes do (64 of a GB200/GB300 NVL72 rack's 72 GPUs for EP32 and EP64). Pure.
#pragma once

#include <string>
#include <string_view>

namespace collbench::step {

enum class Packing {
  ep_aligned,  // each domain holds a whole number of EP groups (EP <= domain), idle GPUs if needed
  rack_major,  // every domain filled to its size, groups cut where a domain ends
};
std::string_view to_string(Packing p);
Packing parse_packing(const std::string& text);  // "ep-aligned" or "rack-major"; InputError otherwise

struct EpPlacement {
  Packing packing = Packing::ep_aligned;
  int gpus = 0, ep = 1, domain_size = 0;
  int used_per_domain = 0;  // GPUs of the job in each full domain (rank r is in domain r / this)
  int domains = 0;          // domains the job occupies (the last may be partial)
  int groups = 0;           // EP groups: gpus / ep
  int straddling = 0;       // EP groups with members in more than one domain
  bool fits = true;         // ep <= domain_size: an EP group can sit inside one domain
  [[nodiscard]] int idle_per_domain() const { return domain_size - used_per_domain; }
};

// ep_aligned: EP <= D fills floor(D / EP) x EP GPUs per domain, so no group straddles; EP > D
// cannot fit, and each domain takes the largest divisor of EP that is <= D GPUs (every group then
// spans EP / that domains). rack_major: D GPUs per domain; the groups that cross a multiple of D
// straddle. domain_size 0: one domain holds every GPU. InputError when gpus is not a multiple of ep.
EpPlacement place_ep_groups(int gpus, int ep, int domain_size, Packing packing);

// One line for the output: "8 EP32 groups in 4 domains of 64 of 72 GPUs (8 idle per domain),
// every group inside one domain".
std::string describe(const EpPlacement& p);

}  // namespace collbench::step
