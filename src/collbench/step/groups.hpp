// The communicator groups of a layout at N GPUs (docs/step.md, "Groups and placement"): ranks
// are numbered tp fastest, then dp, then pp (Megatron-Core's default order); EP groups are
// consecutive ranks of a pipeline stage, expert-DP groups stride over them. Each group's
// placement on scale-up domains of D ranks (rack-major) decides whether it crosses the network.
#pragma once

#include <vector>

#include "collbench/core/placement.hpp"
#include "collbench/step/layout.hpp"

namespace collbench::step {

enum class GroupKind { tp, ep, pp, dp, edp };
const char* to_string(GroupKind g);

struct GroupGeometry {
  GroupKind kind = GroupKind::tp;
  int size = 1;
  std::vector<Placement> placements;  // distinct placements over every group of this kind
  Placement rank0;                    // the placement of the group holding rank 0
  bool spans_domains = false;         // some group has members in more than one domain
};

// ranks_per_domain 0: one domain holds every rank.
GroupGeometry group_geometry(GroupKind kind, const Layout& layout, const Shape& shape, int ranks_per_domain);

}  // namespace collbench::step
