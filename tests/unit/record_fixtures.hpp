// Synthetic records shared by the report tests: an all-reduce case at n ranks whose five samples
// sit around a chosen median, with algbw/busbw computed from it exactly as the runner does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collbench/record/record.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::fixtures {

// The identity of a float32 case on the MPI backend (host buffers, isolated timing, global
// scope) of `bytes` per rank at n ranks in `domain_sizes`; nothing measured yet.
inline record::CaseRecord float32_case(const std::string& run_id, const std::string& collective,
                                       const std::string& algo, std::uint64_t bytes, int n,
                                       std::vector<int> domain_sizes) {
  record::CaseRecord r;
  r.run_id = run_id;
  r.collective = collective;
  r.dtype = "float32";
  r.backend = "mpi";
  r.algo_requested = algo;
  r.scope = "global";
  r.timing = "isolated";
  r.buffers = "host";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.num_ranks = n;
  r.domain_sizes = std::move(domain_sizes);
  r.num_domains = static_cast<int>(r.domain_sizes.size());
  return r;
}

// float32 sum all-reduce of `bytes` per rank at n ranks (one domain unless `domain_sizes`),
// median time `p50_us` (samples 0.95, 0.98, 1, 1.03, 1.09 x p50_us), verified, status ok.
inline record::CaseRecord allreduce_record(int n, std::uint64_t bytes, double p50_us,
                                           std::vector<int> domain_sizes = {}) {
  record::CaseRecord r = float32_case("run-" + std::to_string(n), "allreduce", "ring", bytes, n,
                                      domain_sizes.empty() ? std::vector<int>{n} : std::move(domain_sizes));
  r.redop = "sum";
  r.samples_us = {0.95 * p50_us, 0.98 * p50_us, p50_us, 1.03 * p50_us, 1.09 * p50_us};
  r.time_us = record::TimeStats::from(stats::summarize(r.samples_us));
  r.iterations = 5;
  r.algbw_gbps = static_cast<double>(bytes) / (p50_us * 1e-6) / 1e9;
  r.busbw_gbps = r.algbw_gbps * 2.0 * (n - 1) / n;
  r.checked = true;
  r.status = "ok";
  r.case_key = record::make_case_key(r);
  return r;
}

// One verified case of `collective` (float32, host buffers, isolated timing) at n ranks in one
// domain, median time `p50_us`, algbw = busbw = bytes / p50, with the broadcast root when given;
// no samples, no status (callers add what their output shows).
inline record::CaseRecord timed_record(const std::string& collective, std::uint64_t bytes, int n, double p50_us,
                                       std::optional<int> root = std::nullopt) {
  record::CaseRecord r = float32_case("run", collective, "auto", bytes, n, {n});
  r.root = root;
  record::TimeStats t;
  t.p50 = p50_us;
  r.time_us = t;
  r.algbw_gbps = r.busbw_gbps = static_cast<double>(bytes) / (p50_us * 1e3);
  r.checked = true;
  r.stop_reason = "converged";
  r.case_key = record::make_case_key(r);
  return r;
}

// Model fields consistent with the record: bound and expected times, the busbw they imply at the
// record's p50, and efficiency = bound / p50.
inline void set_model(record::CaseRecord& r, const std::string& system, double bound_time_us, double expected_time_us) {
  record::ModelFields m;
  m.system = system;
  m.bound_time_us = bound_time_us;
  m.expected_time_us = expected_time_us;
  m.bound_busbw_gbps = r.busbw_gbps * r.time_us->p50 / bound_time_us;
  m.expected_busbw_gbps = r.busbw_gbps * r.time_us->p50 / expected_time_us;
  m.efficiency = bound_time_us / r.time_us->p50;
  r.model = m;
}

}  // namespace collbench::fixtures
