// nccl-tests results -- console logs and `-J` JSON files -- parsed into a neutral structure
// that keeps what the log printed (busbw as printed, not recomputed), before any conversion
// into collbench case records. Pure C++; needs no MPI, CUDA or GPU.
//
// Console logs come in several layouts (2017: "bytes N type op ... res" with times in ms;
// 2019: "size count type redop ... error" with a max-error column; 2.x: "+ root" and
// "#wrong"; 2.19: per-iteration columns and timestamps). The table header decides the
// layout; without one, the layout is inferred from the first data row (with a warning).
// Logs found in the wild are prefixed by launcher output (srun -l, mpirun --tag-output,
// timestamps), have rank lists cut with "...", or were retyped by hand: the parser recovers
// what it can and lists in `warnings` what it could not. Malformed data rows, non-numeric
// fields and logs without any table are collbench::InputError (exit code 2) naming the file
// and line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::record {

// Per-iteration statistics: the i_min/i_max/i_p99/i_cv% columns of nccl-tests 2.19 logs run
// with per-iteration timing, or the `*_per_iter` objects of its JSON (which add the rest).
struct NcclTestsPerIteration {
  std::optional<double> min_us, max_us, avg_us, p50_us, p95_us, p99_us, stdev_us, cv_pct;
  std::vector<double> times_us;                               // JSON only
  std::vector<std::vector<double>> per_process_max_times_us;  // JSON only
};

// One half of a table row: the out-of-place or the in-place measurement.
struct NcclTestsHalf {
  std::optional<double> time_us;
  std::optional<double> algbw_gbps;
  std::optional<double> busbw_gbps;    // as printed by nccl-tests
  std::optional<std::uint64_t> wrong;  // #wrong; nullopt when "N/A" (validation off) or absent
  std::optional<double> max_error;     // 2017/2019 layouts: largest absolute error, not a count
  // Half a unit in the last printed digit ("0.44" -> 0.005, "55989" -> 0.5; 5e-7 for JSON,
  // which nccl-tests prints with "%lf"). Comparisons against recomputed values use these.
  double time_tolerance_us = 0.0;
  double algbw_tolerance_gbps = 0.0;
  double busbw_tolerance_gbps = 0.0;
  std::optional<NcclTestsPerIteration> per_iteration;

  [[nodiscard]] bool present() const { return time_us || algbw_gbps || busbw_gbps; }
};

struct NcclTestsRow {
  using Half = NcclTestsHalf;
  std::uint64_t size_bytes = 0;  // nccl-tests convention (docs/hardware-context.md section 3)
  std::uint64_t count = 0;       // elements
  std::string type;              // nccl-tests spelling: float, half, bfloat16, int32, ...
  std::string redop;             // sum, prod, min, max, avg, none; empty when the layout has none
  long root = -1;                // -1: no root (also when the layout has no root column)
  Half out_of_place;
  Half in_place;
  int line = 0;           // 1-based line in the log; 0 for JSON input
  std::size_t index = 0;  // 0-based position among the rows
};

// One "#  Rank  3 Group  0 Pid 1234 on host device  3 [0000:3b:00] NVIDIA H100" line (text),
// or one entry of the JSON `config.devices` list.
struct NcclTestsDevice {
  int rank = 0;
  std::optional<int> group;
  std::optional<long> pid;
  std::string host;
  std::optional<int> device;  // CUDA device index on its host
  std::string bus_id;         // as printed: "0000:3b:00" (2.x) or "0x3b" (older)
  std::string name;
  int line = 0;  // 0 for JSON
};

struct NcclTestsLog {
  std::string format;  // "text" or "json"
  std::string source_path;

  // collbench name (allreduce, allgather, reducescatter, alltoall, alltoallv, broadcast,
  // reduce, sendrecv, gather, scatter, hypercube) or empty when it could not be inferred.
  std::string collective;
  std::string collective_source;  // "Collective test starting line", "program name", "file name", ...
  std::string program;            // nccl-tests binary when known, e.g. "all_reduce_perf"

  std::optional<int> num_ranks;
  std::string num_ranks_source;           // "devices list", "busbw/algbw ratio", ...
  std::optional<int> num_ranks_at_least;  // a lower bound when num_ranks is unknown or recovered

  std::vector<NcclTestsDevice> devices;
  bool devices_complete = false;  // every rank 0..n-1 listed once, nothing cut

  std::optional<std::string> nccl_tests_version;  // "2.17.9"
  std::optional<std::string> nccl_version;        // "2.26.2" (library), or as printed

  // Run parameters under nccl-tests' own names: nThread, nGpus, minBytes, maxBytes, step,
  // warmup iters, iters, agg iters, validation, graph, unalign (text and JSON alike).
  std::map<std::string, std::string> header;
  std::map<std::string, std::string> env;  // JSON only: NCCL_*, CUDA_*, UCX_*, OMPI_*, MPICH_*
  bool cpu_time = false;                   // times are CPU times (nccl-tests -C)

  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw;    // "# Avg bus bandwidth" / average_bus_bandwidth
  std::optional<long> out_of_bounds;  // "# Out of bounds values" / out_of_bounds.count
  std::optional<int> json_version;    // JSON file version (1, 2, 3 so far)
  std::vector<std::string> errors;    // errors nccl-tests itself reported
  std::vector<std::string> warnings;  // what could not be recovered, and what was guessed
  int first_line = 0;                 // lines of the log this run spans (text)
  int last_line = 0;
};

// One run's console output. A log holding several runs (concatenated outputs) is an
// InputError naming the line where the second one starts; use parse_nccl_tests_logs.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& source_path);

// Every run in a console log, in order (a script that ran several tests into one file).
std::vector<NcclTestsLog> parse_nccl_tests_logs(std::string_view text, const std::string& source_path);

// The file written by nccl-tests -J (JSON file versions 1 to 3).
NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& source_path);

// Either format, told apart by the first non-blank character ('{' is JSON).
std::vector<NcclTestsLog> parse_nccl_tests_output(std::string_view text, const std::string& source_path);

// Reads a file and parses it with parse_nccl_tests_output (InputError when unreadable).
std::vector<NcclTestsLog> load_nccl_tests_file(const std::string& path);

// busbw = algbw x factor (nccl-tests convention, docs/hardware-context.md section 3):
// 2(n-1)/n for allreduce; (n-1)/n for allgather, reducescatter, alltoall, alltoallv, gather,
// scatter; 1 for broadcast, reduce, sendrecv, hypercube. InputError for other names or n < 1.
double nccl_tests_busbw_factor(const std::string& collective, int num_ranks);

// "all_reduce_perf", "./build/all_reduce_perf_mpi", "all-reduce", "allreduce" -> "allreduce";
// empty when the name is not an nccl-tests collective.
std::string nccl_tests_collective_name(std::string_view program_or_name);

// NCCL_VERSION_CODE -> "2.26.2" (22602) or "2.7.8" (2708, the pre-2.9 encoding).
std::string nccl_version_string(long version_code);

// True when the printed busbw equals algbw x factor within the rounding of the printed
// digits of both (and when either value is missing: nothing to contradict).
bool nccl_tests_busbw_consistent(const NcclTestsHalf& half, double factor);

}  // namespace collbench::record
