// collbench's own hierarchical algorithms, composed from the backend's communicators so they
// run on any backend (docs/design.md "Scopes and placement"):
//   all-reduce = reduce-scatter inside the domain, all-reduce across domains (between the
//                ranks with the same local index), all-gather inside the domain;
//   all-to-all = aggregate inside the domain (each rank collects, from its domain, the blocks
//                bound for the ranks with its local index), then one exchange across domains
//                between ranks with the same local index, which leaves the blocks in global
//                source order (the two-stage forwarding of DeepEP-style systems).
// Both need equal domain sizes. Other operations are not hierarchical: the runner waives them.
// The MoE families (moe-dispatch, moe-combine, moe-roundtrip) compose their own hierarchical
// exchange from domain_level() and cross_level() (coll/moe.cpp); ep-dp-concurrent issues one
// operation on each level at once inside group_start()/group_end() (coll/ep_dp.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "collbench/backend/backend.hpp"

namespace collbench::backend {

// Block transposition: dst[j][i] = src[i][j] for a x b blocks of `block` bytes (src row-major a x b,
// dst b x a), as min(a, b) strided copies of the other dimension (`copy_rows` has
// Comm::local_copy_rows's arguments). The hierarchical all-to-all packs its stages with it: one
// copy per block would be 2 x m x D device copies per operation on a GPU (m ranks per domain, D
// domains), each a launch in the timed region.
using RowCopy = std::function<void(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                                   std::size_t width, std::size_t rows)>;
void transpose_blocks(const RowCopy& copy_rows, void* dst, const void* src, std::size_t a, std::size_t b,
                      std::size_t block);

// Why a case cannot run hierarchically, or nullopt when it can.
std::optional<std::string> hierarchical_waiver(const std::string& collective, bool uniform_domains, int num_domains);

class HierarchicalComm final : public Comm {
 public:
  // domain: this rank's domain; cross: ranks with the same local index, ordered by domain;
  // global: all ranks (for the remainder that does not split into domain chunks).
  // consecutive_domains: every domain has the same size and holds consecutive ranks (the same
  // on every rank), so a block of whole domains is itself hierarchical (block_level).
  HierarchicalComm(Backend& backend, Comm& domain, Comm& cross, Comm& global, bool consecutive_domains = false);

  [[nodiscard]] int rank() const override { return global_.rank(); }
  [[nodiscard]] int size() const override { return global_.size(); }
  // All-reduce and all-to-all, composed from the levels; InputError for any other operation.
  void run(const Operation& op) override;
  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t) const override { return 0; }
  void barrier() override { global_.barrier(); }
  void local_copy(void* dst, const void* src, std::size_t bytes) override { global_.local_copy(dst, src, bytes); }
  void local_copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                       std::size_t rows) override {
    global_.local_copy_rows(dst, dst_pitch, src, src_pitch, width, rows);
  }
  void synchronize() override { global_.synchronize(); }
  [[nodiscard]] std::string algo_used() const override { return "hierarchical"; }
  [[nodiscard]] Comm* domain_level() override { return &domain_; }
  [[nodiscard]] Comm* cross_level() override { return &cross_; }
  // The block of consecutive ranks: hierarchical again (this domain, the block of the cross
  // communicator, the block of the global one) when it is whole domains of consecutive ranks,
  // else the block of the global communicator (flat inside the block). Collective on first use.
  [[nodiscard]] Comm* block_level(int block_size) override;
  // Groups span the backend's communicators: the levels group through the global one.
  [[nodiscard]] std::optional<std::string> group_waiver() const override { return global_.group_waiver(); }
  void group_start() override { global_.group_start(); }
  void group_end() override { global_.group_end(); }

 private:
  void allreduce(const Operation& op);
  void alltoall(const Operation& op);
  // Scratch of at least `bytes`, grown on demand (never inside a timed region after warm-up).
  void* scratch(int which, std::size_t bytes);

  Backend& backend_;
  Comm& domain_;
  Comm& cross_;
  Comm& global_;
  bool consecutive_domains_;
  std::map<int, std::unique_ptr<HierarchicalComm>> blocks_;  // block_level(), by block size
  std::unique_ptr<Buffer> scratch_[2];
};

}  // namespace collbench::backend
