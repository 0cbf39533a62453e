// Dtype registry and scalar access.
#include "collbench/core/dtype.hpp"

#include <cstring>

#include "collbench/core/error.hpp"
#include "collbench/core/minifloat.hpp"

namespace collbench {

const std::vector<DtypeInfo>& all_dtypes() {
  // exact_limit: 2^31-1 / 2^53 for the wide types; 2^24 float32; 2^11 fp16; 2^8 bf16;
  // 2^4 for both fp8 formats (docs/interfaces.md section 8).
  static const std::vector<DtypeInfo> kDtypes{
      {Dtype::int32, "int32", 4, false, 2147483647LL},      {Dtype::int64, "int64", 8, false, 1LL << 53},
      {Dtype::float32, "float32", 4, true, 1LL << 24},      {Dtype::float64, "float64", 8, true, 1LL << 53},
      {Dtype::float16, "float16", 2, true, 1LL << 11},      {Dtype::bfloat16, "bfloat16", 2, true, 1LL << 8},
      {Dtype::float8e4m3, "float8e4m3", 1, true, 1LL << 4}, {Dtype::float8e5m2, "float8e5m2", 1, true, 1LL << 4},
  };
  return kDtypes;
}

const DtypeInfo& dtype_info(Dtype dtype) {
  return all_dtypes().at(static_cast<std::size_t>(dtype));
}

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (const auto& d : all_dtypes()) names.emplace_back(d.name);
  return names;
}

Dtype parse_dtype(std::string_view name) {
  for (const auto& d : all_dtypes()) {
    if (d.name == name) return d.dtype;
  }
  // nccl-tests spellings, accepted for familiarity.
  struct Alias {
    std::string_view alias;
    Dtype dtype;
  };
  static constexpr Alias kAliases[] = {
      {"int", Dtype::int32},         {"float", Dtype::float32},    {"double", Dtype::float64}, {"half", Dtype::float16},
      {"bf16", Dtype::bfloat16},     {"fp16", Dtype::float16},     {"fp32", Dtype::float32},   {"fp64", Dtype::float64},
      {"f8e4m3", Dtype::float8e4m3}, {"f8e5m2", Dtype::float8e5m2}};
  for (const auto& a : kAliases) {
    if (a.alias == name) return a.dtype;
  }
  throw InputError(unknown_name_message("dtype", name, dtype_names()));
}

double load_element(const void* base, std::size_t index, Dtype dtype) {
  const auto* p = static_cast<const unsigned char*>(base) + index * dtype_size(dtype);
  switch (dtype) {
    case Dtype::int32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case Dtype::int64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case Dtype::float32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case Dtype::float64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case Dtype::float16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return fp16_to_float(v);
    }
    case Dtype::bfloat16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_float(v);
    }
    case Dtype::float8e4m3:
      return fp8e4m3_to_float(*p);
    case Dtype::float8e5m2:
      return fp8e5m2_to_float(*p);
  }
  return 0.0;
}

void store_element(void* base, std::size_t index, Dtype dtype, double value) {
  auto* p = static_cast<unsigned char*>(base) + index * dtype_size(dtype);
  switch (dtype) {
    case Dtype::int32: {
      auto v = static_cast<std::int32_t>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case Dtype::int64: {
      auto v = static_cast<std::int64_t>(value);
      std::memcpy(p, &v, 8);
      return;
    }
    case Dtype::float32: {
      auto v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case Dtype::float64:
      std::memcpy(p, &value, 8);
      return;
    case Dtype::float16: {
      auto v = float_to_fp16(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      return;
    }
    case Dtype::bfloat16: {
      auto v = float_to_bf16(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      return;
    }
    case Dtype::float8e4m3:
      *p = float_to_fp8e4m3(static_cast<float>(value));
      return;
    case Dtype::float8e5m2:
      *p = float_to_fp8e5m2(static_cast<float>(value));
      return;
  }
}

}  // namespace collbench
