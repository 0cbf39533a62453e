// Hierarchical compositions.
#include "collbench/backend/hierarchical.hpp"

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend {
namespace {

// The families HierarchicalComm composes (hierarchical.hpp): all-reduce, all-to-all and MoE's
// all-to-all-v exchanges.
bool has_hierarchical_composition(std::optional<CollectiveId> id) {
  if (!id) return false;
  switch (*id) {
    case CollectiveId::allreduce:
    case CollectiveId::alltoall:
    case CollectiveId::moe_dispatch:
    case CollectiveId::moe_combine:
    case CollectiveId::moe_roundtrip:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::string> hierarchical_waiver(const std::string& collective, bool uniform_domains, int num_domains) {
  if (!has_hierarchical_composition(collective_id(collective))) {
    return "hierarchical is implemented for allreduce, alltoall and moe-*, not " + collective;
  }
  if (!uniform_domains) return std::string("hierarchical needs equal domain sizes (the placement is uneven)");
  if (num_domains < 1) return std::string("hierarchical needs at least one domain");
  return std::nullopt;
}

HierarchicalComm::HierarchicalComm(Backend& backend, Comm& domain, Comm& cross, Comm& global, bool consecutive_domains)
    : backend_(backend), domain_(domain), cross_(cross), global_(global), consecutive_domains_(consecutive_domains) {}

Comm* HierarchicalComm::block_level(int block_size) {
  Comm* global_block = global_.block_level(block_size);
  if (global_block == nullptr || global_block == &global_) return global_block == &global_ ? this : nullptr;
  const int m = domain_.size();
  if (!consecutive_domains_ || block_size % m != 0) return global_block;
  auto& block = blocks_[block_size];
  if (!block) {
    Comm* cross_block = cross_.block_level(block_size / m);
    if (cross_block == nullptr) return global_block;
    block = std::make_unique<HierarchicalComm>(backend_, domain_, *cross_block, *global_block, true);
  }
  return block.get();
}

void HierarchicalComm::run(const Operation& op) {
  static constexpr OpTable<HierarchicalComm> kOps{
      {NcclOp::allreduce, {&HierarchicalComm::allreduce, nullptr}},
      {NcclOp::alltoall, {&HierarchicalComm::alltoall, nullptr}},
  };
  const OpHandlers<HierarchicalComm>* h = kOps.find(op.op);
  if (h == nullptr) {
    throw InputError(std::string("the hierarchical algorithm does not implement ") + std::string(to_string(op.op)));
  }
  (this->*h->run)(op);
}

void* HierarchicalComm::scratch(int which, std::size_t bytes) {
  auto& buf = scratch_[which];
  if (!buf || buf->bytes() < bytes) buf = backend_.allocate(bytes == 0 ? 1 : bytes);
  return buf->data();
}

void HierarchicalComm::allreduce(const Operation& op) {
  const Dtype dtype = op.dtype;
  const auto m = static_cast<std::size_t>(domain_.size());
  const std::size_t elem = dtype_size(dtype);
  const std::size_t chunk = op.count / m;  // elements each local rank owns after the reduce-scatter
  const std::size_t main = chunk * m;
  if (chunk > 0) {
    void* part = scratch(0, chunk * elem);
    // reads send[0, main)
    domain_.run({.op = NcclOp::reducescatter,
                 .dtype = dtype,
                 .redop = op.redop,
                 .send = op.send,
                 .recv = part,
                 .count = chunk});
    cross_.run(
        {.op = NcclOp::allreduce, .dtype = dtype, .redop = op.redop, .send = part, .recv = part, .count = chunk});
    domain_.run({.op = NcclOp::allgather, .dtype = dtype, .send = part, .recv = op.recv, .count = chunk});
  }
  // The tail that does not split into m chunks (fewer than m elements) goes flat.
  if (const std::size_t tail = op.count - main; tail > 0) {
    const auto* s = static_cast<const char*>(op.send) + main * elem;
    auto* r = static_cast<char*>(op.recv) + main * elem;
    global_.run(
        {.op = NcclOp::allreduce, .dtype = dtype, .redop = op.redop, .send = s == r ? r : s, .recv = r, .count = tail});
  }
}

void transpose_blocks(const RowCopy& copy_rows, void* dst, const void* src, std::size_t a, std::size_t b,
                      std::size_t block) {
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  if (block == 0) return;
  if (b <= a) {  // per column j of src: a blocks spaced b apart -> dst row j, contiguous
    for (std::size_t j = 0; j < b; ++j) copy_rows(out + j * a * block, block, in + j * block, b * block, block, a);
  } else {  // per row i of src: b contiguous blocks -> dst column i, spaced a apart
    for (std::size_t i = 0; i < a; ++i) copy_rows(out + i * block, a * block, in + i * b * block, block, block, b);
  }
}

void HierarchicalComm::alltoall(const Operation& op) {
  const std::size_t count_per_peer = op.count;
  const auto m = static_cast<std::size_t>(domain_.size());
  const auto num_domains = static_cast<std::size_t>(cross_.size());
  const std::size_t block = count_per_peer * dtype_size(op.dtype);
  const std::size_t total = block * m * num_domains;
  auto* stage = static_cast<char*>(scratch(0, total));
  auto* arrived = static_cast<char*>(scratch(1, total));
  const auto* in = static_cast<const char*>(op.send);
  const RowCopy copy_rows = [this](void* d, std::size_t dp, const void* s, std::size_t sp, std::size_t w,
                                   std::size_t r) { local_copy_rows(d, dp, s, sp, w, r); };
  // Stage 1 pack: for local peer l', the blocks bound for (d', l') for every domain d':
  // stage[l'][d'] = in[d'][l'].
  transpose_blocks(copy_rows, stage, in, num_domains, m, block);
  domain_.run({.op = NcclOp::alltoall,
               .dtype = op.dtype,
               .send = stage,
               .recv = arrived,
               .count = count_per_peer * num_domains});
  // arrived[l_src][d'] = block from (my domain, l_src) bound for (d', my local index).
  // Stage 2 pack: for domain d', the m blocks (one per local source) bound for (d', me):
  // stage[d'][l_src] = arrived[l_src][d'].
  transpose_blocks(copy_rows, stage, arrived, m, num_domains, block);
  // recv[d_src][l_src]: blocks in global source order d_src * m + l_src.
  cross_.run({.op = NcclOp::alltoall, .dtype = op.dtype, .send = stage, .recv = op.recv, .count = count_per_peer * m});
}

}  // namespace collbench::backend
