// Comm::block_level's shared logic (backend.hpp): which block of consecutive ranks a rank is in,
// the colour and key of the split that makes it, when there is no block (null) or the block is
// the communicator itself, and the per-communicator cache that creates each block once. The MPI
// backend (MPI_Comm_split) and the NCCL backend (ncclCommSplit) differ only in the call that
// makes the communicator; everything here is host code, tested on the CPU (tests/unit
// test_block_split.cpp, and through the MPI backend in tests/mpi).
#pragma once

#include <map>
#include <memory>
#include <vector>

namespace collbench::backend {

class Comm;

// Where rank `rank` of a communicator of `size` ranks stands for blocks of `block_size` ranks.
struct BlockSplit {
  enum class Kind {
    none,   // no block: block_size <= 0, or it does not divide size (block_level returns null)
    self,   // block_size == size: the communicator itself
    split,  // a split with `color` (the block's index) and `key` (the rank: order kept)
  };
  Kind kind = Kind::none;
  int color = 0;
  int key = 0;
  int first = 0;  // the block's first rank in the communicator: color * block_size
};

[[nodiscard]] inline BlockSplit block_split(int size, int rank, int block_size) {
  BlockSplit s;
  if (block_size <= 0 || size <= 0 || size % block_size != 0) return s;
  if (block_size == size) {
    s.kind = BlockSplit::Kind::self;
    return s;
  }
  s.kind = BlockSplit::Kind::split;
  s.color = rank / block_size;
  s.key = rank;
  s.first = s.color * block_size;
  return s;
}

// The entries of `members` (one per rank of the communicator, e.g. its world ranks) that the
// block holds, in its rank order: members[first, first + block_size).
[[nodiscard]] inline std::vector<int> block_members(const std::vector<int>& members, const BlockSplit& s,
                                                    int block_size) {
  if (s.kind != BlockSplit::Kind::split) return members;
  const auto begin = members.begin() + s.first;
  return {begin, begin + block_size};
}

// block_level() of a communicator `self` of `size` ranks in which this rank is `rank`: nullptr,
// `self`, or the cached block communicator, made by `make(split)` on first use (collective over
// `self`: every rank asks for the same size at the same point). `cache` belongs to `self` and
// keeps the blocks alive as long as it lives.
template <class C, class Make>
Comm* cached_block(std::map<int, std::unique_ptr<C>>& cache, Comm* self, int size, int rank, int block_size,
                   Make&& make) {
  const BlockSplit s = block_split(size, rank, block_size);
  if (s.kind == BlockSplit::Kind::none) return nullptr;
  if (s.kind == BlockSplit::Kind::self) return self;
  auto& block = cache[block_size];
  if (!block) block = make(s);
  return block.get();
}

}  // namespace collbench::backend
