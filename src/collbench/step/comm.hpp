// Collective times for the step (docs/step.md, "Collective times"): from the analytic model
// (model/estimate.hpp: the expected value `collbench model` prints, and its bound) or from
// measured records, chosen by collective, communicator size and scope (inside one domain or
// across domains) and interpolated in bytes. Every answer names its source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/core/dtype.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/step/groups.hpp"

namespace collbench::step {

// One slow link: GPU 0's NIC or NVLink at `factor` x its bandwidth.
struct Degrade {
  enum class Link { nic, nvlink } link = Link::nic;
  double factor = 1.0;
};
// "nic:0.5" or "nvlink:0.25"; InputError otherwise.
Degrade parse_degrade(const std::string& text);
model::SystemProfile degraded(const model::SystemProfile& system, const Degrade& d);

struct CommQuery {
  std::string collective;  // allgather reducescatter alltoall sendrecv
  const GroupGeometry* group = nullptr;
  double bytes = 0.0;  // nccl-tests convention of the collective
  Dtype dtype = Dtype::bfloat16;
  std::string phase;  // for messages: "DP reduce-scatter"
  // Measured collectives tried before `collective`, in order (EP phases: moe-dispatch or
  // moe-combine, whose records are keyed by their mean bytes per rank; docs/step.md).
  std::vector<std::string> measured_first;
  // EP phases: the model times them with the MoE dispatch/combine estimate `collbench model
  // moe-dispatch|moe-combine` prints (a uniform traffic matrix of bytes / group size per pair,
  // model::estimate_from_traffic, ep_kernel terms included), not the plain all-to-all.
  bool moe_estimate = false;
};

struct CommAnswer {
  double time_us = 0.0;
  std::optional<double> bound_us;  // model answers only
  std::string source;              // "model", "measured"
  std::string detail;              // what served it
};

// One point of a measured series: bytes and the median time.
struct MeasuredPoint {
  double bytes = 0.0;
  double p50_us = 0.0;
};

// Log-log interpolation between the neighbours of `bytes`; below the smallest size its time (a
// latency floor), above the largest a time growing linearly with bytes from the largest.
// `how` says which: "interpolated", "exact", "below the smallest size", "extrapolated".
double interpolate(const std::vector<MeasuredPoint>& sorted, double bytes, std::string& how);

class CommTimes {
 public:
  CommTimes(model::SystemProfile system, std::vector<record::ResultFile> measured, bool fallback_model,
            std::optional<Degrade> degrade);
  [[nodiscard]] CommAnswer time(const CommQuery& q) const;
  [[nodiscard]] bool measured() const { return !files_.empty(); }
  // The model's expected time of the query's collective with its whole group inside one domain
  // (what a placement that straddles domains costs, beside it).
  [[nodiscard]] double model_inside_one_domain_us(const CommQuery& q) const;

 private:
  [[nodiscard]] CommAnswer from_model(const CommQuery& q) const;
  [[nodiscard]] std::optional<CommAnswer> from_records(const CommQuery& q) const;
  [[nodiscard]] std::optional<CommAnswer> from_series(const CommQuery& q, const std::string& collective) const;
  [[nodiscard]] double model_expected_us(const model::SystemProfile& s, const CommQuery& q, const Placement& p) const;
  model::SystemProfile system_;
  std::optional<model::SystemProfile> degraded_;
  std::vector<record::ResultFile> files_;
  bool fallback_ = false;
};

}  // namespace collbench::step
