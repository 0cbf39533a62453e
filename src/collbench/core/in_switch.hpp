// Bytes each GPU moves per direction in an in-switch (NVLink SHARP) collective on m GPUs of one
// switch domain. Pure formulas shared by the model (model/bounds.hpp, with the bounds they give)
// and the NCCL backend's record annotation (backend/nccl/nvls_host.hpp), which sits below the model.
#pragma once

namespace collbench {

// NCCL's NVLS (and collbench's cb-multimem) all-reduce: each GPU owns S/m of the buffer. It
// multimem.ld_reduce's its chunk (the switch reads that chunk from all m GPUs: every GPU sends
// S/m for each of the m chunks = S, and receives its reduced S/m), then multimem.st's the
// result (sends S/m, the switch multicasts: every GPU receives m x S/m = S). Per direction:
// S + S/m = (1 + 1/m) S.
constexpr double nvls_allreduce_wire_bytes(double bytes, int m) {
  return (1.0 + 1.0 / m) * bytes;
}

// NVLS reduce-scatter (ld_reduce only: send S, receive S/m) or all-gather (st only: send S/m,
// receive S): the busy direction carries S.
constexpr double nvls_gather_scatter_wire_bytes(double bytes) {
  return bytes;
}

}  // namespace collbench
