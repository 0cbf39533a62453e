// One libFuzzer target: built once per entry of fuzz_targets.hpp with COLLBENCH_FUZZ_TARGET set
// to its name (tests/fuzz/CMakeLists.txt). Needs clang (-fsanitize=fuzzer); no MPI, no GPU.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // libFuzzer hands bytes; every parser reads text.
  collbench::fuzz::COLLBENCH_FUZZ_TARGET(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
