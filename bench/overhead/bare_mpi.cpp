// An independent reference for harness overhead: the few lines any MPI benchmark has (barrier,
// one call, MPI_Wtime, max over ranks, median). Uses none of collbench's code on purpose.
//   mpiexec -n 2 bare_mpi [--thread-multiple] allreduce|alltoall ITERS WARMUP BYTES...
// prints "BYTES P50_US" per size. --thread-multiple initialises MPI as collbench does
// (MPI_THREAD_MULTIPLE, for its watchdog thread), so the cost of that thread level can be told
// apart from the harness's own.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace {

// One size: `warmup` untimed operations, then `iters` timed ones after a barrier each; rank 0
// prints the size and the median over iterations of the slowest rank's time (us).
void measure_size(long bytes, bool alltoall, int iters, int warmup, int rank, int size) {
  const int count = static_cast<int>(bytes / 4);  // float32
  // 64-byte aligned like collbench's host buffers: with malloc's 16-byte alignment MPICH's
  // 16 KiB all-reduce took 13-18 us here, aligned 3.6-6 us (docs/performance.md section 5).
  const std::size_t elems = static_cast<std::size_t>(std::max(count, 1));
  const std::size_t alloc_bytes = (elems * sizeof(float) + 63) / 64 * 64;
  const std::unique_ptr<float, decltype(&std::free)> send_buf(static_cast<float*>(std::aligned_alloc(64, alloc_bytes)),
                                                              &std::free);
  const std::unique_ptr<float, decltype(&std::free)> recv_buf(static_cast<float*>(std::aligned_alloc(64, alloc_bytes)),
                                                              &std::free);
  std::span<float> send(send_buf.get(), elems);
  std::span<float> recv(recv_buf.get(), elems);
  std::fill(send.begin(), send.end(), 1.0f);
  std::fill(recv.begin(), recv.end(), 0.0f);
  auto op = [&] {
    if (alltoall) {
      MPI_Alltoall(send.data(), count / size, MPI_FLOAT, recv.data(), count / size, MPI_FLOAT, MPI_COMM_WORLD);
    } else {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
  };
  for (int i = 0; i < warmup; ++i) op();
  std::vector<double> local(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    op();
    local[static_cast<std::size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
  }
  std::vector<double> worst(local.size());
  MPI_Reduce(local.data(), worst.data(), iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::sort(worst.begin(), worst.end());
    const double p50 =
        iters % 2 ? worst[static_cast<std::size_t>(iters / 2)]
                  : (worst[static_cast<std::size_t>(iters / 2 - 1)] + worst[static_cast<std::size_t>(iters / 2)]) / 2;
    std::printf("%ld %.4f\n", bytes, p50);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool thread_multiple = argc > 1 && std::strcmp(argv[1], "--thread-multiple") == 0;
  if (thread_multiple) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int first = thread_multiple ? 2 : 1;  // index of the operation's name
  if (argc < first + 4) {
    if (rank == 0)
      std::fprintf(stderr, "usage: bare_mpi [--thread-multiple] allreduce|alltoall ITERS WARMUP BYTES...\n");
    MPI_Finalize();
    return 2;
  }
  const bool alltoall = std::strcmp(argv[first], "alltoall") == 0;
  const int iters = std::atoi(argv[first + 1]);
  const int warmup = std::atoi(argv[first + 2]);
  for (int a = first + 3; a < argc; ++a) measure_size(std::atol(argv[a]), alltoall, iters, warmup, rank, size);
  MPI_Finalize();
  return 0;
}
