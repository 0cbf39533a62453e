// Where a case's input is written and its result checked (--verify; docs/measurement.md
// "Verification"): on the host (a host fill, upload, download and host compare; the MPI backend's
// only path) or on the device (the backend's fill and check kernels, backend/device_patterns.hpp,
// given the case's device plan, coll/device_plan.hpp). Pure host code: the choice and the plan
// are tested on the CPU (tests/unit/test_device_verify.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/core/pattern_rules.hpp"
#include "collbench/plan/sweep.hpp"

namespace collbench::run {

// --verify: auto (the device where the backend offers it and the family has a device plan, else
// the host), host (always the host: debugging), device (as auto, but refused up front on a
// backend without device verification).
enum class VerifyMode { automatic, host, device };

// InputError (exit 2) naming --verify, the value and the accepted values.
VerifyMode parse_verify_mode(std::string_view text);
std::string_view to_string(VerifyMode mode);

// --verify device where a case's backend has no device verification (the registry's
// BackendEntry::device_verification): InputError naming the backend and what to use instead.
void check_verify_mode(VerifyMode mode, const plan::Sweep& sweep);

// Whether one case fills and checks on the device.
bool verifies_on_device(VerifyMode mode, bool backend_offers_device_patterns, bool family_has_plan);

// What the device is given for one case: the pattern parameters; the input's segments relative
// to the buffer that holds the input (in place: shifted by the family's in_place_input_offset)
// and that buffer's length (zero outside the segments); and the expected result's segments,
// relative to where the result is found (the family's in_place_result_offset in place).
struct DeviceCasePlan {
  pattern::PatternParams params;
  std::size_t fill_elems = 0;
  std::vector<pattern::Segment> fill;
  std::vector<pattern::Segment> expected;
};

// nullopt when the family has no device plan (MoE, ep-dp-concurrent: the host path).
std::optional<DeviceCasePlan> device_case_plan(const coll::Collective& collective, const coll::Shape& shape,
                                               const coll::CaseContext& ctx);

}  // namespace collbench::run
