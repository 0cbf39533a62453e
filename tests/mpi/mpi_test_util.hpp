// Helpers shared by the MPI test suites (run under mpiexec by main_mpi.cpp): the world's size and
// rank, and a small case with a fixed iteration count (no warm-up time, no minimum time), so the
// suites stay quick at 4 ranks on 2 cores.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collbench/plan/sweep.hpp"

namespace collbench::mpitest {

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// v summed over every rank of the world (a count of wrong elements, say).
inline std::uint64_t sum_over_ranks(std::uint64_t v) {
  std::uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// One case of `collective` at `bytes`: exactly `iters` timed iterations after one warm-up.
inline plan::Case fixed_case(const std::string& collective, std::uint64_t bytes, int iters,
                             Scope scope = Scope::global) {
  plan::Case c;
  c.collective = collective;
  c.scope = scope;
  c.bytes = bytes;
  c.stop.min_iters = c.stop.max_iters = iters;
  c.stop.warmup = 1;
  c.stop.min_time_s = 0;
  return c;
}

inline plan::Sweep sweep_of(std::string name, std::vector<plan::Case> cases) {
  plan::Sweep s;
  s.name = std::move(name);
  s.source = "<test>";
  s.cases = std::move(cases);
  return s;
}

}  // namespace collbench::mpitest
