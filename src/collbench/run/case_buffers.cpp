// A case's buffers, filled, and its result checked: on the host or on the device.
#include "collbench/run/case_buffers.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "collbench/backend/device_patterns.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::run {
namespace {

// A new buffer of `bytes`, zeroed and then written by `write`: in place when the backend's memory
// is host memory (no host copy per rank: a simulation holds every rank in one process), else in a
// staged host copy that is uploaded.
template <class Write>
std::unique_ptr<backend::Buffer> filled_buffer(backend::Backend& be, std::size_t bytes, const Write& write) {
  auto buf = be.allocate(bytes);
  if (auto* host = static_cast<unsigned char*>(buf->host_data())) {
    std::memset(host, 0, bytes);
    write(host);
    return buf;
  }
  std::vector<unsigned char> staged(bytes, 0);
  write(staged.data());
  be.upload(*buf, staged.data(), bytes);
  return buf;
}

// The device plan of the case when it is filled and checked on the device, else nullopt.
std::optional<DeviceCasePlan> device_plan_of(const MeasureInput& in, const coll::Shape& shape,
                                             const coll::CaseContext& ctx) {
  const bool offered = in.backend->device_patterns() != nullptr;
  if (!verifies_on_device(in.verify, offered, true)) return std::nullopt;
  return device_case_plan(*in.collective, shape, ctx);  // nullopt: the family has no plan
}

// The backend's device patterns (the case has a device plan only where it offers them).
backend::DevicePatterns& device_of(const MeasureInput& in) {
  backend::DevicePatterns* dp = in.backend->device_patterns();
  if (dp == nullptr) throw std::logic_error("a device plan on a backend without device patterns");
  return *dp;
}

// The input buffer (`bytes` long), written on the device from the plan or on the host by the family.
std::unique_ptr<backend::Buffer> input_buffer(const MeasureInput& in, const CaseBuffers& b, std::size_t bytes,
                                              std::size_t input_offset_elems, const coll::Shape& shape,
                                              const coll::CaseContext& ctx) {
  if (b.device) {
    auto buf = in.backend->allocate(bytes);
    device_of(in).fill(buf->data(), b.device->fill_elems, b.device->params, b.device->fill);
    return buf;
  }
  const std::size_t elem = dtype_size(ctx.dtype);
  return filled_buffer(*in.backend, bytes,
                       [&](unsigned char* p) { in.collective->fill(p + input_offset_elems * elem, shape, ctx); });
}

// Device: count on the device; a corrupt item flips one element there and writes it back after.
std::uint64_t count_wrong_on_device(const MeasureInput& in, CaseBuffers& b, bool corrupt, Dtype dtype) {
  backend::DevicePatterns& dp = device_of(in);
  unsigned char* result = static_cast<unsigned char*>(b.recv_ptr) + b.result_offset_elems * dtype_size(dtype);
  if (!corrupt) return dp.count_wrong(result, b.device->params, b.device->expected);
  const std::size_t victim = b.result_elems / 2;
  const double kept = dp.read(result, victim, dtype);
  dp.write(result, victim, dtype, coll::corrupted(kept));
  const std::uint64_t wrong = dp.count_wrong(result, b.device->params, b.device->expected);
  dp.write(result, victim, dtype, kept);
  return wrong;
}

}  // namespace

CaseBuffers allocate_and_fill(const MeasureInput& in, const coll::Shape& shape, const coll::CaseContext& ctx) {
  const std::size_t elem = dtype_size(ctx.dtype);
  CaseBuffers b;
  b.device = device_plan_of(in, shape, ctx);
  const auto& coll = *in.collective;
  if (ctx.in_place) {
    const std::size_t elems = shape.in_place_elems();
    const std::size_t input_offset = coll.in_place_input_offset(shape, ctx);
    b.recv = input_buffer(in, b, std::max<std::size_t>(elems * elem, 1), input_offset, shape, ctx);
    auto* base = static_cast<unsigned char*>(b.recv->data());
    b.send_ptr = base + input_offset * elem;
    b.recv_ptr = base;
    b.result_offset_elems = coll.in_place_result_offset(shape, ctx, *in.comm);
  } else {
    b.send = input_buffer(in, b, std::max<std::size_t>(shape.send_elems * elem, 1), 0, shape, ctx);
    b.recv = in.backend->allocate(std::max<std::size_t>(shape.recv_elems * elem, 1));
    b.send_ptr = b.send->data();
    b.recv_ptr = b.recv->data();
  }
  b.result_elems = shape.recv_elems;
  return b;
}

std::uint64_t count_wrong_result(const MeasureInput& in, CaseBuffers& b, const coll::Shape& shape,
                                 const coll::CaseContext& ctx) {
  const std::size_t elem = dtype_size(ctx.dtype);
  const bool corrupt = in.faults->corrupt(in.world_rank, in.case_index) && b.result_elems > 0;
  if (b.device) return count_wrong_on_device(in, b, corrupt, ctx.dtype);
  // Host memory is checked where it is; device memory (or a result the fault injection is about
  // to corrupt, which must not reach the timed iterations) through a host copy.
  auto* base = corrupt ? nullptr : static_cast<unsigned char*>(b.recv->host_data());
  std::vector<unsigned char> staged;
  if (base == nullptr) {
    staged.resize(std::max<std::size_t>(b.recv->bytes(), 1));
    in.backend->download(staged.data(), *b.recv, b.recv->bytes());
    base = staged.data();
  }
  unsigned char* result = base + b.result_offset_elems * elem;
  if (corrupt) {
    // Flip one element so that verification must catch it and name this rank.
    const std::size_t victim = b.result_elems / 2;
    store_element(result, victim, ctx.dtype, coll::corrupted(load_element(result, victim, ctx.dtype)));
  }
  return in.collective->verify(result, shape, ctx);
}

}  // namespace collbench::run
