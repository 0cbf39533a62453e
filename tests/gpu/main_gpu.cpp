// GoogleTest main for the GPU tests (one rank per GPU, under mpiexec): MPI is initialised once;
// only rank 0 prints, and any rank's failure fails the job. Needs a GPU (label `gpu`).
#include <gtest/gtest.h>
#include <mpi.h>

#include "collbench/run/session.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  collbench::run::MpiSession session(&argc, &argv);
  if (session.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}
