// A stand-in libnccl.so.2 of NCCL 2.26.5 for the loader's unit test (test_nccl_loader.cpp): it
// exports every symbol collbench requires (nccl_api.hpp CB_NCCL_REQUIRED_SYMBOLS) and none of the
// optional ones newer NCCLs have (ncclCommWindowRegister/Deregister 2.27, ncclAlltoAll 2.28).
// Only ncclGetVersion is ever called; the others exist for dlsym and fail if called.
extern "C" {

int ncclGetVersion(int* version) {
  *version = 22605;  // NCCL_VERSION(2, 26, 5)
  return 0;
}

// Each returns ncclInvalidUsage (5).
#define CB_FAKE_NCCL(name) \
  int name() {             \
    return 5;              \
  }
CB_FAKE_NCCL(ncclGetErrorString)
CB_FAKE_NCCL(ncclGetLastError)
CB_FAKE_NCCL(ncclGetUniqueId)
CB_FAKE_NCCL(ncclCommInitRankConfig)
CB_FAKE_NCCL(ncclCommSplit)
CB_FAKE_NCCL(ncclCommUserRank)
CB_FAKE_NCCL(ncclCommCount)
CB_FAKE_NCCL(ncclCommGetAsyncError)
CB_FAKE_NCCL(ncclCommFinalize)
CB_FAKE_NCCL(ncclCommDestroy)
CB_FAKE_NCCL(ncclCommAbort)
CB_FAKE_NCCL(ncclCommRegister)
CB_FAKE_NCCL(ncclCommDeregister)
CB_FAKE_NCCL(ncclMemAlloc)
CB_FAKE_NCCL(ncclMemFree)
CB_FAKE_NCCL(ncclGroupStart)
CB_FAKE_NCCL(ncclGroupEnd)
CB_FAKE_NCCL(ncclAllReduce)
CB_FAKE_NCCL(ncclReduceScatter)
CB_FAKE_NCCL(ncclAllGather)
CB_FAKE_NCCL(ncclBroadcast)
CB_FAKE_NCCL(ncclReduce)
CB_FAKE_NCCL(ncclSend)
CB_FAKE_NCCL(ncclRecv)
#undef CB_FAKE_NCCL
}
