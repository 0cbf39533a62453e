#include "collbench/step/groups.hpp"

#include <algorithm>
#include <map>

namespace collbench::step {

const char* to_string(GroupKind g) {
  constexpr const char* kNames[] = {"tp", "ep", "pp", "dp", "edp"};
  return kNames[static_cast<int>(g)];
}

namespace {

struct Pattern {
  std::vector<int> bases;
  int stride = 1;
  int size = 1;
};

Pattern pattern_of(GroupKind kind, const Layout& l, const Shape& s) {
  Pattern p;
  const int stage = l.tp * s.dp;  // ranks of one pipeline stage
  switch (kind) {
    case GroupKind::tp:
      p.size = l.tp;
      for (int r = 0; r < s.gpus; r += l.tp) p.bases.push_back(r);
      break;
    case GroupKind::dp:
      p.size = s.dp;
      p.stride = l.tp;
      for (int st = 0; st < l.pp; ++st)
        for (int t = 0; t < l.tp; ++t) p.bases.push_back(st * stage + t);
      break;
    case GroupKind::ep:
      p.size = l.ep;
      for (int r = 0; r < s.gpus; r += l.ep) p.bases.push_back(r);
      break;
    case GroupKind::edp:
      p.size = s.edp;
      p.stride = l.ep;
      for (int st = 0; st < l.pp; ++st)
        for (int e = 0; e < l.ep; ++e) p.bases.push_back(st * stage + e);
      break;
    case GroupKind::pp:
      p.size = l.pp;
      p.stride = stage;
      for (int r = 0; r < stage; ++r) p.bases.push_back(r);
      break;
  }
  return p;
}

Placement placement_of(int base, int stride, int size, int ranks_per_domain) {
  std::map<int, int> per_domain;
  for (int i = 0; i < size; ++i) {
    const int rank = base + i * stride;
    ++per_domain[ranks_per_domain > 0 ? rank / ranks_per_domain : 0];
  }
  std::vector<int> sizes;
  for (const auto& kv : per_domain) sizes.push_back(kv.second);
  Placement p = placement_from_sizes(size, sizes);
  p.source = "layout";
  return p;
}

}  // namespace

GroupGeometry group_geometry(GroupKind kind, const Layout& layout, const Shape& shape, int ranks_per_domain) {
  const Pattern p = pattern_of(kind, layout, shape);
  GroupGeometry g;
  g.kind = kind;
  g.size = p.size;
  for (const int base : p.bases) {
    Placement pl = placement_of(base, p.stride, p.size, ranks_per_domain);
    if (base == 0) g.rank0 = pl;
    g.spans_domains = g.spans_domains || pl.num_domains() > 1;
    const bool seen = std::any_of(g.placements.begin(), g.placements.end(),
                                  [&](const Placement& q) { return q.domain_sizes == pl.domain_sizes; });
    if (!seen) g.placements.push_back(std::move(pl));
  }
  return g;
}

}  // namespace collbench::step
