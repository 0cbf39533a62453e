// MPI type and op tables.
#include "collbench/backend/mpi/mpi_types.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/core/minifloat.hpp"

namespace collbench::backend {
namespace {

struct SoftTypes {
  MPI_Datatype bf16 = MPI_DATATYPE_NULL;
  MPI_Datatype fp16 = MPI_DATATYPE_NULL;
  MPI_Datatype e4m3 = MPI_DATATYPE_NULL;
  MPI_Datatype e5m2 = MPI_DATATYPE_NULL;
  std::array<MPI_Op, 4> ops{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
};

SoftTypes& soft_types();

Dtype soft_dtype_of(MPI_Datatype dt) {
  const auto& t = soft_types();
  if (dt == t.bf16) return Dtype::bfloat16;
  if (dt == t.fp16) return Dtype::float16;
  if (dt == t.e4m3) return Dtype::float8e4m3;
  return Dtype::float8e5m2;
}

template <Redop R>
void soft_reduce(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const Dtype dtype = soft_dtype_of(*dt);
  for (int i = 0; i < *len; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    const double a = load_element(in, idx, dtype);
    const double b = load_element(inout, idx, dtype);
    store_element(inout, idx, dtype, apply_redop(R, a, b));
  }
}

SoftTypes g_types;
bool g_created = false;

SoftTypes& soft_types() {
  SoftTypes& types = g_types;
  if (!g_created) {
    g_created = true;
    CB_CHECK_MPI(MPI_Type_dup(MPI_UINT16_T, &types.bf16));
    CB_CHECK_MPI(MPI_Type_dup(MPI_UINT16_T, &types.fp16));
    CB_CHECK_MPI(MPI_Type_dup(MPI_UINT8_T, &types.e4m3));
    CB_CHECK_MPI(MPI_Type_dup(MPI_UINT8_T, &types.e5m2));
    CB_CHECK_MPI(MPI_Op_create(&soft_reduce<Redop::sum>, 1, &types.ops[0]));
    CB_CHECK_MPI(MPI_Op_create(&soft_reduce<Redop::prod>, 1, &types.ops[1]));
    CB_CHECK_MPI(MPI_Op_create(&soft_reduce<Redop::min>, 1, &types.ops[2]));
    CB_CHECK_MPI(MPI_Op_create(&soft_reduce<Redop::max>, 1, &types.ops[3]));
  }
  return types;
}

bool is_soft(Dtype dtype) {
  return dtype == Dtype::bfloat16 || dtype == Dtype::float16 || dtype == Dtype::float8e4m3 ||
         dtype == Dtype::float8e5m2;
}

}  // namespace

void free_mpi_types() {
  if (!g_created) return;
  for (MPI_Datatype* t : {&g_types.bf16, &g_types.fp16, &g_types.e4m3, &g_types.e5m2}) {
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
  }
  for (auto& op : g_types.ops) {
    if (op != MPI_OP_NULL) MPI_Op_free(&op);
  }
  g_created = false;
}

MPI_Datatype mpi_datatype(Dtype dtype) {
  switch (dtype) {
    case Dtype::int32:
      return MPI_INT32_T;
    case Dtype::int64:
      return MPI_INT64_T;
    case Dtype::float32:
      return MPI_FLOAT;
    case Dtype::float64:
      return MPI_DOUBLE;
    case Dtype::bfloat16:
      return soft_types().bf16;
    case Dtype::float16:
      return soft_types().fp16;
    case Dtype::float8e4m3:
      return soft_types().e4m3;
    case Dtype::float8e5m2:
      return soft_types().e5m2;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(Redop redop, Dtype dtype) {
  if (is_soft(dtype)) return soft_types().ops.at(static_cast<std::size_t>(redop));
  switch (redop) {
    case Redop::sum:
      return MPI_SUM;
    case Redop::prod:
      return MPI_PROD;
    case Redop::min:
      return MPI_MIN;
    case Redop::max:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}

}  // namespace collbench::backend
