// `--layout nccl-tests`: run's and sweep's console output as nccl-tests prints it, so that log
// parsers written for nccl-tests (collbench's own `import` among them) read it. Per block of
// cases (collective, backend, ranks, domains, timing): the run lines ("# Collective test
// starting: all_reduce_perf", "# nThread ...", the devices), the table header, one row per size
// with out-of-place and in-place side by side (size, count, type, redop, root, then time, algbw,
// busbw, #wrong of each), and the footer (out-of-bounds values, average bus bandwidth).
// Every number is a field of the run header or a record: time is the record's p50 (under
// pipelined timing each sample is the average over a batch of back-to-back operations). A case
// without a time (waived) is a comment line; a half with no case is N/A.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "collbench/report/console_writer.hpp"

namespace collbench::report {

// per_iteration: add nccl-tests' i_min i_max i_p99 i_cv% columns (nccl-tests -I 1) from the
// record's min, max, p99 and cv.
std::unique_ptr<ConsoleWriter> make_nccltests_layout_writer(bool per_iteration);

// nccl-tests' number cells: "%W.2f", else "%W.1f", else "%W.0f", else "%W.1e" ("%W.0e" below
// width 7), whichever fits the width first.
std::string nccltests_number(double value, int width);
// nccl-tests' spelling of a collbench dtype (float32 -> float, float16 -> half, ...).
std::string nccltests_type_name(std::string_view dtype);
// The nccl-tests binary of a collective (allreduce -> all_reduce_perf); collbench's own
// families (MoE, ep-dp-concurrent) get "collbench_<name>".
std::string nccltests_program(std::string_view collective);

}  // namespace collbench::report
