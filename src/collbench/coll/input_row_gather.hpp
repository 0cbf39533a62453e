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

// Plays process `row` of a run whose other rows are already known (one process's part, in
// benchmarks and tests): its own row comes from the caller, every other row from a dense
// num_rows x num_rows matrix, cut to the row_len entries of the row's block of consecutive ranks
// (the whole row when row_len is num_rows).
class KnownRowsGather final : public RowGather {
 public:
  KnownRowsGather(int row, std::vector<std::int64_t> dense) : row_(row), dense_(std::move(dense)) {}
  [[nodiscard]] std::vector<int> my_rows(int /*num_rows*/) const override { return {row_}; }
  [[nodiscard]] std::vector<std::int64_t> gather(std::span<const std::int64_t> mine, int num_rows,
                                                 std::size_t row_len) override {
    mine_.assign(mine.begin(), mine.end());
    std::vector<std::int64_t> all;
    const auto n = static_cast<std::size_t>(num_rows);
    for (std::size_t s = 0; s < n; ++s) {
      if (s == static_cast<std::size_t>(row_)) {
        all.insert(all.end(), mine.begin(), mine.end());
        continue;
      }
      const auto first = static_cast<std::ptrdiff_t>(s * n + (row_len < n ? s - s % row_len : 0));
      all.insert(all.end(), dense_.begin() + first, dense_.begin() + first + static_cast<std::ptrdiff_t>(row_len));
    }
    return all;
  }
  // What this process handed to the last gather.
  [[nodiscard]] const std::vector<std::int64_t>& mine() const { return mine_; }

 private:
  int row_;
  std::vector<std::int64_t> dense_;
  std::vector<std::int64_t> mine_;
};

}  // namespace collbench::coll
