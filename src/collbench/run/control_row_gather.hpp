// The gather Collective::share_inputs uses in a run: rows spread over the processes of the
// control communicator in contiguous blocks, assembled on every process with MPI_Allgatherv.
#pragma once

#include "collbench/coll/input_row_gather.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

// The rows process `process` of `processes` computes: [first, first + count), blocks in process
// order (process p gets rows floor(p*rows/P) up to floor((p+1)*rows/P)); with more processes
// than rows some get none.
struct RowSpan {
  int first = 0;
  int count = 0;
};
RowSpan row_block(int process, int processes, int rows);

class ControlRowGather final : public coll::RowGather {
 public:
  explicit ControlRowGather(const Control& control) : control_(control) {}
  [[nodiscard]] std::vector<int> my_rows(int num_rows) const override;
  [[nodiscard]] std::vector<std::int64_t> gather(std::span<const std::int64_t> mine, int num_rows,
                                                 std::size_t row_len) override;

 private:
  const Control& control_;
};

// Collective over the control communicator: every case's share_inputs (collective.hpp), in
// sweep order, on the communicator the case will have (rank 0's context, as the record's).
void share_case_inputs(const plan::Sweep& sweep, const Control& control, const Placement& placement);

}  // namespace collbench::run
