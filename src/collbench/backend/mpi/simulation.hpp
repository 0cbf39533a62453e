// What changes when collbench runs inside SimGrid's SMPI (the simulation build,
// -DCOLLBENCH_SIMGRID=ON, docs/simulation.md), in one place: everything else is the same source.
// In an ordinary build every function here is the plain host version and active() is false.
//
// Under SMPI all ranks are actors of one host process, time is simulated (MPI_Wtime advances by
// the platform model, not by the host clock), and host names are the simulated hosts'.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace collbench::backend::sim {

// The run header's `simulated` object: which engine ran the simulation, on which platform file.
struct Info {
  std::string engine;           // "simgrid-smpi"
  std::string version;          // the SimGrid library that ran ("3.32.0")
  std::string platform;         // platform file, from $COLLBENCH_SIM_PLATFORM ("" when not set)
  std::string platform_sha256;  // of that file's bytes ("" when not readable)
  std::string config;           // smpirun --cfg options, from $COLLBENCH_SIM_CONFIG (as scripts/simulate passed them)
  bool shared_buffers = false;  // $COLLBENCH_SIM_SHARED_BUFFERS=1: buffers alias across ranks (no verification)
  std::string watchdog;         // what became of the watchdog in simulation, and why
};

// True in the simulation build.
[[nodiscard]] bool active();

// The simulation's provenance; nullopt in an ordinary build.
[[nodiscard]] std::optional<Info> info();

// Seconds on the clock that times a run: MPI_Wtime under SMPI (simulated), the host's monotonic
// clock otherwise. For durations that are not collective timings (accept's run time, overlap).
[[nodiscard]] double now_seconds();

// Sleeps `seconds`: simulated time under SMPI (a host sleep would not advance the simulation).
void sleep_seconds(double seconds);

// This rank's host: the simulated host under SMPI (every rank shares the real host name there),
// gethostname otherwise.
[[nodiscard]] std::string host_name();

// Host buffers of the MPI backend: 64-byte aligned, zeroed. With shared buffers in a simulation
// (memory of 1,024 ranks would not fit one machine), every rank's buffer of a size aliases one
// SMPI shared allocation, so results cannot be verified.
[[nodiscard]] void* allocate_host(std::size_t bytes);
void free_host(void* data);

// The shared allocation a host buffer of `bytes` aliases with shared buffers: its size rounded up
// to one of 16 classes per power of two (less than 1/8 larger; 64-byte steps below 1 KiB), so ranks
// whose buffers differ a little share one block (MoE: every rank's layout has a size of its own,
// which gave every rank its own block: 11.5 GB at 512 simulated ranks). SMPI shares allocations
// by key, so a key is unique to one size: 32 x log2(class's power of two) + the step count.
struct SharedClass {
  std::size_t bytes = 0;
  int key = 0;
};
[[nodiscard]] SharedClass shared_class(std::size_t bytes);

}  // namespace collbench::backend::sim
