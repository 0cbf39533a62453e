// Work a collective family would otherwise repeat for every rank on every rank, split over the
// processes of a run: each process computes the rows it is given, and a gather assembles all of
// them on every process (Collective::share_inputs; the runner provides the gather over its
// control communicator). Pure interface: no MPI here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace collbench::coll {

class RowGather {
 public:
  RowGather() = default;
  virtual ~RowGather() = default;
  RowGather(const RowGather&) = delete;
  RowGather& operator=(const RowGather&) = delete;

  // The rows 0..num_rows-1 are spread over the processes: the ones this process computes
  // (empty when there are more processes than rows).
  [[nodiscard]] virtual std::vector<int> my_rows(int num_rows) const = 0;
  // Collective over every process: the rows 0..num_rows-1 of row_len values each, concatenated in
  // row order. `mine` holds this process's rows (my_rows order), each row_len values.
  [[nodiscard]] virtual std::vector<std::int64_t> gather(std::span<const std::int64_t> mine, int num_rows,
                                                         std::size_t row_len) = 0;
};

// Every process computes every row (one process, or no communicator): a gather that needs no
// communication, for offline callers and tests.
class LocalRowGather final : public RowGather {
 public:
  [[nodiscard]] std::vector<int> my_rows(int num_rows) const override {
    std::vector<int> rows(static_cast<std::size_t>(num_rows));
    for (int i = 0; i < num_rows; ++i) rows[static_cast<std::size_t>(i)] = i;
    return rows;
  }
  [[nodiscard]] std::vector<std::int64_t> gather(std::span<const std::int64_t> mine, int /*num_rows*/,
                                                 std::size_t /*row_len*/) override {
    return {mine.begin(), mine.end()};
  }
};

}  // namespace collbench::coll
