// The default backend policy (policy.hpp): what a backend that overrides nothing does. In
// collbench_backend_api, so that every backend library can derive from it.
#include <fmt/format.h>

#include "collbench/backend/policy.hpp"

namespace collbench::backend {

std::string BackendPolicy::default_buffers(std::string_view /*algo*/) const {
  return "host";
}

void BackendPolicy::check_buffers(std::string_view /*buffers*/) const {}

bool BackendPolicy::replays_graphs() const {
  return false;
}

std::optional<std::string> BackendPolicy::algo_waiver(std::string_view /*algo*/, std::string_view /*collective*/,
                                                      int /*graph*/) const {
  return std::nullopt;
}

std::optional<std::string> BackendPolicy::capability_waiver(Backend& /*backend*/, Comm& /*comm*/,
                                                            std::string_view /*collective*/, Dtype /*dtype*/,
                                                            Redop /*redop*/) const {
  return std::nullopt;
}

std::optional<DeviceMemory> BackendPolicy::device_memory(int /*local_rank*/, int /*ranks_on_host*/) const {
  return std::nullopt;
}

bool BackendPolicy::polls_for_overlap() const {
  return false;
}

std::string BackendPolicy::instance_key(std::string_view name, std::string_view algo, std::string_view buffers,
                                        bool /*overlap*/) const {
  return fmt::format("{}|{}|{}", name, algo, buffers);
}

RecordNotes BackendPolicy::record_notes(std::string_view /*algo*/, std::string_view /*collective*/, Dtype /*dtype*/,
                                        double /*bytes*/, int /*comm_ranks*/) const {
  return {};
}

}  // namespace collbench::backend
