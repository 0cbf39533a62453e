// Stated limits on counts (issue 37 item 4): a step projected for more GPUs than any cluster, and
// a global batch that would pass 2^31 - 1 sequences, are refused with the numbers instead of
// printing an overflowed batch. Exact messages.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/step/layout.hpp"

namespace collbench::step {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// 2 layers, 4 experts: enough for shape_at to split stages and EP groups.
Architecture two_layers() {
  Architecture a;
  a.layers = 2, a.dense_layers = 1, a.moe_layers = 1, a.experts = 4;
  return a;
}

Layout data_parallel(int global_batch, int gpus) {
  Layout l;
  l.name = "dp";
  l.global_batch = global_batch;
  l.gpus = gpus;
  return l;
}

TEST(StepLimits, GpusPastTwoToTheTwentyAreRefused) {
  const Layout l = data_parallel(1, 1);
  EXPECT_EQ(error_of([&] { (void)shape_at(l, two_layers(), 1000000000); }),
            "--gpus 1000000000: accepted: 1 to 1048576 GPUs");
  EXPECT_EQ(shape_at(l, two_layers(), kMaxGpus).global_batch, kMaxGpus);  // 1 x 2^20 / 1
}

TEST(StepLimits, AGlobalBatchPastIntMaxIsRefusedNotWrapped) {
  // 2^30 sequences at 1 GPU grow to 2^30 x 2 = 2^31 at 2 GPUs: one past INT_MAX (it printed
  // -2147483648 before); 2^30 - 1 grows to 2^31 - 2 and fits.
  EXPECT_EQ(error_of([] { (void)shape_at(data_parallel(1 << 30, 1), two_layers(), 2); }),
            "--gpus 2: the global batch 1073741824 (at 1 GPUs) grows to 2147483648 sequences, past the limit of "
            "2147483647");
  EXPECT_EQ(shape_at(data_parallel((1 << 30) - 1, 1), two_layers(), 2).global_batch, 2147483646);
}

}  // namespace
}  // namespace collbench::step
