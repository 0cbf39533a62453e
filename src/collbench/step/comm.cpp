#include "collbench/step/comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/traffic.hpp"

namespace collbench::step {

Degrade parse_degrade(const std::string& text) {
  const auto colon = text.find(':');
  const std::string link = text.substr(0, colon);
  Degrade d;
  double f = 0.0;
  bool ok = colon != std::string::npos && (link == "nic" || link == "nvlink");
  if (ok) {
    const std::string v = text.substr(colon + 1);
    const auto res = std::from_chars(v.data(), v.data() + v.size(), f);
    ok = !v.empty() && res.ec == std::errc{} && res.ptr == v.data() + v.size() && f > 0.0 && f <= 1.0;
  }
  if (!ok) {
    throw InputError(fmt::format(
        "--degrade '{}': expected LINK:FACTOR with LINK nic or nvlink and FACTOR in (0, 1], e.g. nic:0.5", text));
  }
  d.link = link == "nic" ? Degrade::Link::nic : Degrade::Link::nvlink;
  d.factor = f;
  return d;
}

model::SystemProfile degraded(const model::SystemProfile& system, const Degrade& d) {
  model::SystemProfile s = system;
  if (d.link == Degrade::Link::nic) {
    s.scale_out.nic_bytes_per_s *= d.factor;
  } else {
    s.scale_up.bytes_per_s *= d.factor;
  }
  return s;
}

double interpolate(const std::vector<MeasuredPoint>& pts, double bytes, std::string& how) {
  if (bytes <= pts.front().bytes) {
    how = bytes == pts.front().bytes ? "exact" : "below the smallest size";
    return pts.front().p50_us;
  }
  if (bytes >= pts.back().bytes) {
    how = bytes == pts.back().bytes ? "exact" : "extrapolated";
    return pts.back().p50_us * bytes / pts.back().bytes;
  }
  const auto hi =
      std::lower_bound(pts.begin(), pts.end(), bytes, [](const MeasuredPoint& p, double b) { return p.bytes < b; });
  if (hi->bytes == bytes) {
    how = "exact";
    return hi->p50_us;
  }
  const auto lo = hi - 1;
  const double w = std::log(bytes / lo->bytes) / std::log(hi->bytes / lo->bytes);
  how = "interpolated";
  return std::exp(std::log(lo->p50_us) + w * (std::log(hi->p50_us) - std::log(lo->p50_us)));
}

CommTimes::CommTimes(model::SystemProfile system, std::vector<record::ResultFile> measured, bool fallback_model,
                     std::optional<Degrade> degrade)
    : system_(std::move(system)), files_(std::move(measured)), fallback_(fallback_model) {
  if (degrade) degraded_ = degraded(system_, *degrade);
}

namespace {

// The MoE dispatch/combine estimate of `collbench model moe-dispatch|moe-combine`: every pair of
// the EP group (self included) carries bytes / group size.
model::TrafficEstimate moe_estimate(const model::SystemProfile& s, const CommQuery& q, const Placement& p) {
  const int n = p.num_ranks();
  model::TrafficMatrix m;
  m.num_ranks = n;
  m.bytes.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n),
                 static_cast<std::uint64_t>(std::llround(q.bytes / n)));
  return model::estimate_from_traffic(s, m, p);
}

}  // namespace

double CommTimes::model_expected_us(const model::SystemProfile& s, const CommQuery& q, const Placement& p) const {
  if (q.moe_estimate) return moe_estimate(s, q, p).estimate.expected_time_us;
  model::CaseGeometry g;
  g.collective = q.collective;
  g.algo = "auto";
  g.dtype = q.dtype;
  g.bytes = static_cast<std::uint64_t>(std::llround(q.bytes));
  g.placement = p;
  g.scope = Scope::global;
  const auto out = model::model_case(s, g);
  if (!out.estimate) {
    throw InputError(fmt::format("{}: the model has no estimate for {} on {} ranks: {}", q.phase, q.collective,
                                 p.num_ranks(), out.why_not));
  }
  return out.estimate->expected_time_us;
}

CommAnswer CommTimes::from_model(const CommQuery& q) const {
  CommAnswer a;
  a.source = "model";
  const Placement* worst = nullptr;
  for (const auto& p : q.group->placements) {
    const double t = model_expected_us(system_, q, p);
    if (worst == nullptr || t > a.time_us) a.time_us = t, worst = &p;
  }
  if (q.moe_estimate) {
    const auto t = moe_estimate(system_, q, *worst);
    a.bound_us = t.estimate.bound_time_us;
    a.detail = fmt::format("model {} expected (MoE dispatch/combine estimate on {}, packing {}; {})", system_.name,
                           worst->num_ranks(), model::packing_string(*worst), t.estimate.note);
  } else {
    model::CaseGeometry g;
    g.collective = q.collective;
    g.algo = "auto";
    g.dtype = q.dtype;
    g.bytes = static_cast<std::uint64_t>(std::llround(q.bytes));
    g.placement = *worst;
    const auto e = model::estimate(system_, g);
    a.bound_us = e->bound_time_us;
    a.detail = fmt::format("model {} expected ({} on {}, packing {})", system_.name, e->algo_modelled,
                           worst->num_ranks(), model::packing_string(*worst));
  }
  if (degraded_) {
    const double t = model_expected_us(*degraded_, q, q.group->rank0);
    if (t > a.time_us) {
      a.time_us = t;
      a.detail += "; GPU 0's group on the degraded link";
    }
  }
  return a;
}

double CommTimes::model_inside_one_domain_us(const CommQuery& q) const {
  const int n = q.group->size;
  return model_expected_us(system_, q, placement_from_sizes(n, {n}));
}

namespace {

bool is_moe(const record::CaseRecord& r) {
  return is_moe_collective(r.collective);
}

// A MoE record's exchange runs inside EP groups of `workload.ep_size` consecutive ranks.
int moe_ep_size(const record::CaseRecord& r) {
  const auto& w = r.workload;
  if (w.is_object() && w.contains("ep_size") && w["ep_size"].is_number_integer()) return w["ep_size"].get<int>();
  return r.num_ranks;
}

int comm_size_of(const record::CaseRecord& r) {
  if (is_moe(r)) return moe_ep_size(r);
  if (r.comm_ranks) return *r.comm_ranks;
  if (r.scope == "global") return r.num_ranks;
  return r.domain_sizes.empty() ? r.num_ranks : *std::max_element(r.domain_sizes.begin(), r.domain_sizes.end());
}

// Whether some block of `k` consecutive ranks crosses a boundary of the record's domains.
bool blocks_span(const std::vector<int>& domains, int k) {
  int edge = 0;
  for (const int d : domains) {
    edge += d;
    if (edge % k != 0) return true;
  }
  return false;
}

bool spans_of(const record::CaseRecord& r) {
  if (r.scope != "global" || r.num_domains <= 1) return false;
  const int ep = is_moe(r) ? moe_ep_size(r) : r.num_ranks;
  return ep >= r.num_ranks || blocks_span(r.domain_sizes, ep);
}

// The bytes a record is keyed by: the collective's convention, or for MoE the mean bytes a rank
// sends (bytes_logical_total / ranks, the step's t U x row bytes), else bytes_max_rank.
double key_bytes(const record::CaseRecord& r) {
  if (is_moe(r) && r.bytes_logical_total && r.num_ranks > 0) {
    return static_cast<double>(*r.bytes_logical_total) / r.num_ranks;
  }
  return static_cast<double>(r.bytes);
}

std::string scope_words(bool spans) {
  return spans ? "across domains" : "inside one domain";
}

}  // namespace

std::optional<CommAnswer> CommTimes::from_series(const CommQuery& q, const std::string& collective) const {
  const bool spans = q.group->spans_domains;
  std::map<double, std::vector<double>> by_bytes;
  std::vector<std::string> paths;
  for (const auto& f : files_) {
    bool used = false;
    for (const auto& r : f.cases) {
      if (r.status != "ok" || !r.time_us || r.bytes == 0 || r.collective != collective) continue;
      if (comm_size_of(r) != q.group->size || spans_of(r) != spans) continue;
      by_bytes[key_bytes(r)].push_back(r.time_us->p50);
      used = true;
    }
    if (used) paths.push_back(f.path);
  }
  if (by_bytes.empty()) return std::nullopt;
  std::vector<MeasuredPoint> pts;
  for (auto& [bytes, times] : by_bytes) {
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    pts.push_back({bytes, n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2])});
  }
  CommAnswer a;
  a.source = "measured";
  std::string how;
  a.time_us = interpolate(pts, q.bytes, how);
  a.detail = fmt::format(
      "measured {} ({} on {} ranks {}, {} sizes {}..{}{}, {} at {})", join(paths), collective, q.group->size,
      scope_words(spans), pts.size(), format_bytes(static_cast<std::uint64_t>(pts.front().bytes)),
      format_bytes(static_cast<std::uint64_t>(pts.back().bytes)), is_moe_collective(collective) ? " per rank" : "", how,
      format_bytes(static_cast<std::uint64_t>(std::llround(q.bytes))));
  return a;
}

std::optional<CommAnswer> CommTimes::from_records(const CommQuery& q) const {
  std::optional<CommAnswer> a;
  for (const auto& c : q.measured_first) {
    if ((a = from_series(q, c))) break;
  }
  if (!a) a = from_series(q, q.collective);
  if (a && degraded_) {
    // A measured run saw healthy links: scale GPU 0's group by the model's degraded / healthy ratio.
    const double healthy = model_expected_us(system_, q, q.group->rank0);
    const double slow = model_expected_us(*degraded_, q, q.group->rank0);
    a->time_us *= slow / healthy;
    a->detail += fmt::format("; x{:.3g} for the degraded link (model ratio)", slow / healthy);
  }
  return a;
}

CommAnswer CommTimes::time(const CommQuery& q) const {
  if (files_.empty()) return from_model(q);
  if (auto a = from_records(q)) return *a;
  if (fallback_) {
    CommAnswer a = from_model(q);
    a.source = "model (fallback)";
    return a;
  }
  std::vector<std::string> have;
  for (const auto& f : files_) {
    for (const auto& r : f.cases) {
      if (r.status != "ok" || !r.time_us) continue;
      const std::string item =
          fmt::format("{} on {} ranks {}", r.collective, comm_size_of(r), scope_words(spans_of(r)));
      if (std::find(have.begin(), have.end(), item) == have.end()) have.push_back(item);
    }
  }
  std::vector<std::string> paths;
  for (const auto& f : files_) paths.push_back(f.path);
  std::vector<std::string> wanted = q.measured_first;
  wanted.push_back(q.collective);
  throw InputError(fmt::format(
      "--measured {}: no ok record of {} on {} ranks {}, which the {} needs; the files hold: {}; measure it "
      "(collbench run {} ...) or pass --fallback model",
      join(paths), join(wanted, " or "), q.group->size, scope_words(q.group->spans_domains), q.phase,
      have.empty() ? std::string("nothing usable") : join(have, "; "), q.collective));
}

}  // namespace collbench::step
