// Rows of shared case inputs spread over the control communicator (control_row_gather.hpp).
#include "collbench/run/control_row_gather.hpp"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/run/case_checks.hpp"
#include "collbench/run/measure.hpp"

namespace collbench::run {

RowSpan row_block(int process, int processes, int rows) {
  const auto edge = [&](int p) {
    return static_cast<int>(static_cast<std::int64_t>(p) * rows / static_cast<std::int64_t>(processes));
  };
  return RowSpan{edge(process), edge(process + 1) - edge(process)};
}

std::vector<int> ControlRowGather::my_rows(int num_rows) const {
  const RowSpan b = row_block(control_.rank(), control_.size(), num_rows);
  std::vector<int> rows(static_cast<std::size_t>(b.count));
  for (int i = 0; i < b.count; ++i) rows[static_cast<std::size_t>(i)] = b.first + i;
  return rows;
}

std::vector<std::int64_t> ControlRowGather::gather(std::span<const std::int64_t> mine, int num_rows,
                                                   std::size_t row_len) {
  const int processes = control_.size();
  if (static_cast<std::uint64_t>(num_rows) * row_len > static_cast<std::uint64_t>(INT_MAX)) {
    throw std::length_error(
        fmt::format("shared case inputs: {} rows of {} values exceed MPI's int counts", num_rows, row_len));
  }
  std::vector<int> counts(static_cast<std::size_t>(processes));
  std::vector<int> displs(static_cast<std::size_t>(processes));
  for (int p = 0; p < processes; ++p) {
    const RowSpan b = row_block(p, processes, num_rows);
    counts[static_cast<std::size_t>(p)] = static_cast<int>(static_cast<std::size_t>(b.count) * row_len);
    displs[static_cast<std::size_t>(p)] = static_cast<int>(static_cast<std::size_t>(b.first) * row_len);
  }
  if (static_cast<int>(mine.size()) != counts[static_cast<std::size_t>(control_.rank())]) {
    throw std::logic_error(fmt::format("shared case inputs: rank {} holds {} values, its rows {}", control_.rank(),
                                       mine.size(), counts[static_cast<std::size_t>(control_.rank())]));
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(num_rows) * row_len);
  CB_CHECK_MPI(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(), counts.data(),
                              displs.data(), MPI_INT64_T, control_.comm()));
  return all;
}

void share_case_inputs(const plan::Sweep& sweep, const Control& control, const Placement& placement) {
  ControlRowGather gather(control);
  for (const auto& c : sweep.cases) {
    const coll::Collective& coll = coll::find_collective(c.collective);
    coll.share_inputs(c.bytes, case_context(c, 0, case_comm_size(c, placement), &placement), gather);
  }
}

}  // namespace collbench::run
