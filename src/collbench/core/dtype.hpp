// Element types (docs/interfaces.md section 1) and the host-side scalar access used by input
// generation and verification. `exact_limit` is the largest magnitude below which every
// integer is exactly representable; verification keeps all expected values under it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class Dtype : std::uint8_t { int32, int64, float32, float64, float16, bfloat16, float8e4m3, float8e5m2 };

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  std::size_t size_bytes;
  bool is_float;
  std::int64_t exact_limit;  // integers in [-limit, limit] are exact
};

const DtypeInfo& dtype_info(Dtype dtype);
const std::vector<DtypeInfo>& all_dtypes();
std::vector<std::string> dtype_names();
Dtype parse_dtype(std::string_view name);  // InputError naming the accepted names
inline std::string_view to_string(Dtype d) {
  return dtype_info(d).name;
}
inline std::size_t dtype_size(Dtype d) {
  return dtype_info(d).size_bytes;
}

// Scalar load/store through the element's storage format (host memory).
double load_element(const void* base, std::size_t index, Dtype dtype);
void store_element(void* base, std::size_t index, Dtype dtype, double value);

}  // namespace collbench
