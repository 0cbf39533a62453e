// Device-side input generation and verification: a backend capability (Backend::device_patterns()).
// The runner fills a case's input and checks its result on the device through it, instead of a
// host fill, an upload, a download and a host compare, when the backend offers it and the family
// has a device plan (run/device_verify.hpp decides; coll/device_plan.hpp makes the plan). The
// NCCL backend offers it (its fill and check kernels); the MPI backend does not (host memory:
// the host path is already in place). No CUDA header here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "collbench/core/dtype.hpp"
#include "collbench/core/pattern_rules.hpp"

namespace collbench::backend {

class DevicePatterns {
 public:
  virtual ~DevicePatterns() = default;
  // Sets `total_elems` elements of device memory `dst` to zero, then writes the segments.
  virtual void fill(void* dst, std::size_t total_elems, const pattern::PatternParams& params,
                    std::span<const pattern::Segment> segments) = 0;
  // Waits for every operation issued so far and returns how many elements of device memory
  // `src` differ from the segments' values (raw bits).
  virtual std::uint64_t count_wrong(const void* src, const pattern::PatternParams& params,
                                    std::span<const pattern::Segment> segments) = 0;
  // One element of device memory, through its storage format (as core load/store_element):
  // fault injection reads an element and writes back coll::corrupted(value).
  [[nodiscard]] virtual double read(const void* src, std::size_t index, Dtype dtype) = 0;
  virtual void write(void* dst, std::size_t index, Dtype dtype, double value) = 0;
};

}  // namespace collbench::backend
