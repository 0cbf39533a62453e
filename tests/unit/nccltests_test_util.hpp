// Helpers shared by the nccl-tests import tests (test_nccltests_import.cpp, _errors.cpp): the
// fixtures' folder, file reading, warnings, and the busbw consistency check.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_import.hpp"

namespace nccltests_test {

using namespace collbench;
using namespace collbench::record;

inline const std::string kFixtures = std::string(COLLBENCH_SOURCE_DIR) + "/tests/data/nccl-tests/";
inline const std::string kRealLogs = kFixtures;  // the real logs sit beside the hand-written ones
inline const std::string kPkb = "allreduce-2xK80-perfkitbenchmarker.txt";
inline const std::string kTogether = "reducescatter-8xH100-together.txt";

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open test input " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string real_log(const std::string& name) {
  return read_file(kRealLogs + name);
}

inline std::string all_warnings(const NcclTestsLog& log) {
  std::string out;
  for (const auto& w : log.warnings) out += "  " + w + "\n";
  return out;
}

inline bool any_warning_contains(const NcclTestsLog& log, const std::string& needle) {
  for (const auto& w : log.warnings)
    if (w.find(needle) != std::string::npos) return true;
  return false;
}

inline const NcclTestsRow* row_with_size(const NcclTestsLog& log, std::uint64_t size) {
  for (const auto& r : log.rows)
    if (r.size_bytes == size) return &r;
  return nullptr;
}

// The brief's check: the busbw printed in the log is kept as printed, and recomputing it
// from the printed algbw with the collective's factor agrees within the rounding of the
// printed digits (0.005 for two decimals).
inline void expect_busbw_preserved_and_consistent(const NcclTestsLog& log) {
  ASSERT_TRUE(log.num_ranks.has_value()) << all_warnings(log);
  const double f = nccl_tests_busbw_factor(log.collective, *log.num_ranks);
  int checked = 0;
  for (const auto& row : log.rows) {
    for (const NcclTestsHalf* h : {&row.out_of_place, &row.in_place}) {
      if (!h->algbw_gbps || !h->busbw_gbps) continue;
      EXPECT_TRUE(nccl_tests_busbw_consistent(*h, f)) << "line " << row.line << " size " << row.size_bytes;
      const double recomputed = *h->algbw_gbps * f;
      EXPECT_LE(std::abs(recomputed - *h->busbw_gbps), h->algbw_tolerance_gbps * f + h->busbw_tolerance_gbps + 1e-9)
          << "line " << row.line;
      if (log.format == "text" && *h->busbw_gbps < 1000) {
        EXPECT_LE(h->busbw_tolerance_gbps, 0.05 + 1e-12);  // one or two printed decimals
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

template <typename F>
inline std::string input_error_message(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  if (pos == std::string::npos) throw std::runtime_error("test setup: '" + from + "' not found");
  return text.replace(pos, from.size(), to);
}

}  // namespace nccltests_test
