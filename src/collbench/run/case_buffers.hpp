// A case's buffers and the two verification steps around the collective (docs/measurement.md
// steps 1-2): the input written, and the result's wrong elements counted, on the host or on the
// device (run/device_verify.hpp chooses). measure.cpp launches and times; this file fills and
// checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "collbench/backend/backend.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/run/device_verify.hpp"
#include "collbench/run/measure.hpp"

namespace collbench::run {

// Buffers for one case: two (out of place) or one (in place), plus the launch pointers.
struct CaseBuffers {
  std::unique_ptr<backend::Buffer> send, recv;
  const void* send_ptr = nullptr;
  void* recv_ptr = nullptr;
  std::size_t result_offset_elems = 0;
  std::size_t result_elems = 0;
  // Set when the case fills and checks on the device (the backend's device_patterns()).
  std::optional<DeviceCasePlan> device;
};

// The case's buffers with its input written (on the device when verifies_on_device(), else on the
// host and uploaded where the memory is not host memory).
CaseBuffers allocate_and_fill(const MeasureInput& in, const coll::Shape& shape, const coll::CaseContext& ctx);

// This rank's wrong elements of the result the collective left in `b` (after synchronize()). The
// fault injection's corrupt item flips one element first, so that verification must catch it
// and name this rank; the timed iterations never see the flipped element (host: a staged copy is
// flipped; device: the element is written back after the count).
std::uint64_t count_wrong_result(const MeasureInput& in, CaseBuffers& b, const coll::Shape& shape,
                                 const coll::CaseContext& ctx);

}  // namespace collbench::run
