// --verify: the choice between host and device verification, and a case's device plan.
#include "collbench/run/device_verify.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "collbench/backend/registry.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/core/error.hpp"

namespace collbench::run {
namespace {

constexpr std::array<std::pair<std::string_view, VerifyMode>, 3> kModes{
    {{"auto", VerifyMode::automatic}, {"host", VerifyMode::host}, {"device", VerifyMode::device}}};

}  // namespace

VerifyMode parse_verify_mode(std::string_view text) {
  for (const auto& [name, mode] : kModes) {
    if (name == text) return mode;
  }
  throw InputError(fmt::format("--verify {}: accepted: auto, host, device", text));
}

std::string_view to_string(VerifyMode mode) {
  for (const auto& [name, m] : kModes) {
    if (m == mode) return name;
  }
  return "auto";
}

void check_verify_mode(VerifyMode mode, const plan::Sweep& sweep) {
  if (mode != VerifyMode::device) return;
  for (const auto& c : sweep.cases) {
    if (backend::backend_entry(c.backend).device_verification) continue;
    throw InputError(
        fmt::format("--verify device: the {} backend has no device verification (its buffers are host memory, "
                    "filled and checked on the host); use --verify host or auto, or --backend nccl",
                    c.backend));
  }
}

bool verifies_on_device(VerifyMode mode, bool backend_offers_device_patterns, bool family_has_plan) {
  return mode != VerifyMode::host && backend_offers_device_patterns && family_has_plan;
}

std::optional<DeviceCasePlan> device_case_plan(const coll::Collective& collective, const coll::Shape& shape,
                                               const coll::CaseContext& ctx) {
  auto fill = backend::nccl::fill_plan(collective.name(), shape, ctx);
  auto expected = backend::nccl::verify_plan(collective.name(), shape, ctx);
  if (!fill || !expected) return std::nullopt;
  DeviceCasePlan plan;
  plan.params = backend::nccl::pattern_params(ctx);
  plan.fill_elems = shape.send_elems;
  if (ctx.in_place) {
    plan.fill_elems = shape.in_place_elems();
    const std::size_t offset = collective.in_place_input_offset(shape, ctx);
    for (auto& seg : *fill) seg.offset_elems += offset;
  }
  plan.fill = std::move(*fill);
  plan.expected = std::move(*expected);
  return plan;
}

}  // namespace collbench::run
