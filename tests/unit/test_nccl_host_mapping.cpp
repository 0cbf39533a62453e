// Host logic of the NCCL backend (backend/nccl/nccl_host.hpp): version strings, dtype and
// reduction codes, fp8 availability by NCCL version and GPU, --algo -> NCCL_ALGO/NCCL_PROTO and
// the environment communicators are created under (checked with a parser that follows NCCL
// 2.28's parseList rules), algo_used reporting, --buffers kinds, all-to-all-v send/recv lists
// and device selection. CPU only; runs in every build.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"

namespace {

using namespace collbench;
using namespace collbench::backend::nccl;

template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no InputError>";
}

TEST(NcclHostMapping, VersionCodesAndStrings) {
  EXPECT_EQ(nccl_version_code(2, 28, 9), 22809);
  EXPECT_EQ(nccl_version_code(2, 8, 4), 2804);  // the old encoding up to 2.8
  EXPECT_EQ(nccl_version_code(2, 9, 6), 20906);
  EXPECT_EQ(format_nccl_version(22809), "2.28.9");
  EXPECT_EQ(format_nccl_version(22400), "2.24.0");
  EXPECT_EQ(format_nccl_version(2804), "2.8.4");
  EXPECT_EQ(format_nccl_version(0), "unknown");
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
  EXPECT_EQ(format_cuda_version(12090), "12.9");
  EXPECT_EQ(format_cuda_version(0), "unknown");
  EXPECT_LT(kNcclFp8Version, kNcclWindowVersion);
  EXPECT_LT(kNcclWindowVersion, kNcclAlltoAllVersion);
}

TEST(NcclHostMapping, DtypeAndRedopCodesAreNcclEnumValues) {
  // ncclDataType_t / ncclRedOp_t values from nccl.h (nccl_backend.cpp static_asserts the same).
  const std::map<Dtype, int> dtypes{{Dtype::int32, 2},       {Dtype::int64, 4},      {Dtype::float16, 6},
                                    {Dtype::float32, 7},     {Dtype::float64, 8},    {Dtype::bfloat16, 9},
                                    {Dtype::float8e4m3, 10}, {Dtype::float8e5m2, 11}};
  ASSERT_EQ(dtypes.size(), all_dtypes().size());
  for (const auto& [d, code] : dtypes) EXPECT_EQ(nccl_dtype_code(d), code) << to_string(d);
  EXPECT_EQ(nccl_redop_code(Redop::sum), 0);
  EXPECT_EQ(nccl_redop_code(Redop::prod), 1);
  EXPECT_EQ(nccl_redop_code(Redop::max), 2);
  EXPECT_EQ(nccl_redop_code(Redop::min), 3);
}

TEST(NcclHostMapping, Fp8NeedsNccl224AndSm90ForReductions) {
  const int v2289 = nccl_version_code(2, 28, 9);
  const int v2232 = nccl_version_code(2, 23, 4);
  for (const auto& info : all_dtypes()) {
    const bool fp8 = info.dtype == Dtype::float8e4m3 || info.dtype == Dtype::float8e5m2;
    EXPECT_FALSE(nccl_dtype_unsupported(info.dtype, v2289, v2289, 9, true)) << info.name;
    EXPECT_FALSE(nccl_dtype_unsupported(info.dtype, v2289, v2289, 10, true)) << info.name;
    EXPECT_EQ(nccl_dtype_unsupported(info.dtype, v2289, v2232, 9, false).has_value(), fp8) << info.name;
    EXPECT_EQ(nccl_dtype_unsupported(info.dtype, v2232, v2289, 9, false).has_value(), fp8) << info.name;
    EXPECT_EQ(nccl_dtype_unsupported(info.dtype, v2289, v2289, 8, true).has_value(), fp8) << info.name;
    EXPECT_FALSE(nccl_dtype_unsupported(info.dtype, v2289, v2289, 8, false)) << info.name;  // moves are fine
  }
  const auto why = nccl_dtype_unsupported(Dtype::float8e4m3, v2289, v2232, 9, false);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("2.24"), std::string::npos) << *why;
  EXPECT_NE(why->find("2.23.4"), std::string::npos) << *why;
  const auto sm = nccl_dtype_unsupported(Dtype::float8e5m2, v2289, v2289, 8, true);
  ASSERT_TRUE(sm);
  EXPECT_NE(sm->find("sm_90"), std::string::npos) << *sm;
}

// NCCL 2.28 parseList (src/graph/tuning.cc): "[elems][;prefix:elems]...", the first entry may
// lack a prefix and then applies to every function; '^' negates; names are case-insensitive.
// Returns function -> enabled elements, or an error string.
struct Parsed {
  std::map<std::string, std::set<std::string>> enabled;
  std::string error;
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Parsed parse_nccl_list(const std::string& text, const std::vector<std::string>& elems) {
  const std::vector<std::string> funcs{"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
  Parsed p;
  for (const auto& f : funcs) p.enabled[f] = {elems.begin(), elems.end()};
  const auto entries = split(text, ';');
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto colon = entries[i].find(':');
    std::string prefix;
    std::string list = entries[i];
    if (colon != std::string::npos) {
      prefix = lower(entries[i].substr(0, colon));
      list = entries[i].substr(colon + 1);
    } else if (i != 0) {
      p.error = "entry without a prefix after the first";
      return p;
    }
    bool negate = !list.empty() && list[0] == '^';
    if (negate) list = list.substr(1);
    std::set<std::string> named;
    for (const auto& e : split(list, ',')) {
      if (std::find(elems.begin(), elems.end(), lower(e)) == elems.end()) {
        p.error = "unknown element " + e;
        return p;
      }
      named.insert(lower(e));
    }
    bool found = false;
    for (const auto& f : funcs) {
      if (!prefix.empty() && prefix != f) continue;
      found = true;
      std::set<std::string> on;
      for (const auto& e : elems) {
        if ((named.count(e) > 0) != negate) on.insert(e);
      }
      p.enabled[f] = on;
    }
    if (!found) {
      p.error = "unknown prefix " + prefix;
      return p;
    }
  }
  return p;
}

const std::vector<std::string> kNcclAlgos{"tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree", "pat"};
const std::vector<std::string> kNcclProtos{"ll", "ll128", "simple"};

TEST(NcclHostMapping, EveryNcclAlgorithmNameMapsToAValidNcclAlgoString) {
  const int v = nccl_version_code(2, 28, 9);
  for (const auto& name : algorithm_names()) {
    const AlgoSettings s = algo_settings(name, v);
    EXPECT_EQ(s.algo, name);
    if (!s.nccl_algo.empty()) {
      const Parsed p = parse_nccl_list(s.nccl_algo, kNcclAlgos);
      ASSERT_TRUE(p.error.empty()) << name << ": " << s.nccl_algo << ": " << p.error;
      // Every forced operation has exactly the forced algorithm's NCCL variants enabled, and each
      // enabled algorithm is one NCCL implements for that function.
      for (NcclOp op : s.forced_ops) {
        const auto& on = p.enabled.at(std::string(to_string(op)));
        EXPECT_FALSE(on.empty()) << name << " " << to_string(op);
        for (const auto& a : on) {
          if (op == NcclOp::broadcast) {
            EXPECT_EQ(a, "ring") << name;
          }
          if (op == NcclOp::reducescatter || op == NcclOp::allgather) {
            EXPECT_TRUE(a == "ring" || a == "nvls" || a == "pat" || a == "collnetdirect") << name << " " << a;
          }
        }
      }
      // Functions that were not forced keep every algorithm (NCCL's own choice), so e.g. a tree
      // setting cannot break all-gather.
      for (const auto& [func, on] : p.enabled) {
        const bool forced =
            std::any_of(s.forced_ops.begin(), s.forced_ops.end(), [&](NcclOp op) { return to_string(op) == func; });
        if (!forced && name != "ring") {
          EXPECT_EQ(on.size(), kNcclAlgos.size()) << name << " " << func;
        }
      }
    }
    if (!s.nccl_proto.empty()) {
      const Parsed p = parse_nccl_list(s.nccl_proto, kNcclProtos);
      ASSERT_TRUE(p.error.empty()) << name << ": " << s.nccl_proto << ": " << p.error;
      for (NcclOp op : s.forced_ops) {
        EXPECT_EQ(p.enabled.at(std::string(to_string(op))), std::set<std::string>{"simple"}) << name;
      }
    }
  }
}

TEST(NcclHostMapping, AlgorithmTable) {
  const int v = nccl_version_code(2, 28, 9);
  for (const char* a : {"auto", "flat", "hierarchical"}) {
    const auto s = algo_settings(a, v);
    EXPECT_TRUE(algo_env(s).empty()) << a;
    EXPECT_TRUE(s.forced_ops.empty()) << a;
    EXPECT_FALSE(s.needs_symmetric_buffers) << a;
  }
  EXPECT_EQ(algo_settings("ring", v).nccl_algo, "ring");
  EXPECT_EQ(algo_settings("tree", v).nccl_algo, "allreduce:tree");
  EXPECT_EQ(algo_settings("nvls", v).nccl_algo, "allreduce:nvls;reducescatter:nvls;allgather:nvls");
  EXPECT_EQ(algo_settings("nvls", v).nccl_proto, "allreduce:simple;reducescatter:simple;allgather:simple");
  EXPECT_EQ(algo_settings("nvlstree", v).nccl_algo, "allreduce:nvlstree");
  EXPECT_EQ(algo_settings("pat", v).nccl_algo, "reducescatter:pat;allgather:pat");
  EXPECT_TRUE(algo_settings("symmetric", v).needs_symmetric_buffers);
  EXPECT_TRUE(algo_env(algo_settings("symmetric", v)).empty());

  const auto collnet = algo_env(algo_settings("collnet", v));
  ASSERT_EQ(collnet.size(), 2u);
  EXPECT_EQ(collnet[0].name, "NCCL_ALGO");
  EXPECT_EQ(collnet[1].name, "NCCL_COLLNET_ENABLE");
  EXPECT_EQ(collnet[1].value, "1");

  const auto nvls = algo_env(algo_settings("nvls", v));
  ASSERT_EQ(nvls.size(), 2u);
  EXPECT_EQ(nvls[0].name, "NCCL_ALGO");
  EXPECT_EQ(nvls[1].name, "NCCL_PROTO");

  // Before NCCL 2.24 there is no per-function syntax: the plain names apply to every function.
  const int old = nccl_version_code(2, 23, 4);
  EXPECT_EQ(algo_settings("tree", old).nccl_algo, "tree");
  EXPECT_EQ(algo_settings("nvls", old).nccl_proto, "simple");
  EXPECT_TRUE(parse_nccl_list(algo_settings("collnet", old).nccl_algo, kNcclAlgos).error.empty());
}

TEST(NcclHostMapping, CbMultimemIsCollbenchsOwnKernelsOnWindowBuffers) {
  const int v = nccl_version_code(2, 28, 9);
  // No NCCL_ALGO (the kernels are collbench's), window buffers, and the three operations it runs.
  const auto mm = algo_settings("cb-multimem", v);
  EXPECT_TRUE(algo_env(mm).empty());
  EXPECT_TRUE(mm.needs_symmetric_buffers);
  EXPECT_EQ(algo_used_for(mm, NcclOp::allreduce), "cb-multimem");
  EXPECT_EQ(algo_used_for(mm, NcclOp::reducescatter), "cb-multimem");
  EXPECT_EQ(algo_used_for(mm, NcclOp::allgather), "cb-multimem");
  EXPECT_EQ(algo_used_for(mm, NcclOp::broadcast), "");  // NCCL's own broadcast
}

TEST(NcclHostMapping, UnknownAlgorithmsAreInputErrors) {
  const int v = nccl_version_code(2, 28, 9);
  const std::string typo = input_error([&] { (void)algo_settings("rign", v); });
  EXPECT_NE(typo.find("did you mean 'ring'"), std::string::npos) << typo;
}

TEST(NcclHostMapping, AlgoUsedReportsOnlyWhatIsKnown) {
  const int v = nccl_version_code(2, 28, 9);
  const auto ring = algo_settings("ring", v);
  EXPECT_EQ(algo_used_for(ring, NcclOp::allreduce), "ring");
  EXPECT_EQ(algo_used_for(ring, NcclOp::broadcast), "ring");
  EXPECT_EQ(algo_used_for(ring, NcclOp::alltoall), "");  // point-to-point: NCCL_ALGO does not apply
  EXPECT_EQ(algo_used_for(ring, NcclOp::none), "");
  const auto tree = algo_settings("tree", v);
  EXPECT_EQ(algo_used_for(tree, NcclOp::allreduce), "tree");
  EXPECT_EQ(algo_used_for(tree, NcclOp::allgather), "");  // NCCL chose
  EXPECT_EQ(algo_used_for(algo_settings("nvls", v), NcclOp::reducescatter), "nvls");
  EXPECT_EQ(algo_used_for(algo_settings("auto", v), NcclOp::allreduce), "");
  EXPECT_EQ(algo_used_for(algo_settings("symmetric", v), NcclOp::allreduce), "");
}

TEST(NcclHostMapping, AlgorithmWaivers) {
  // Every collective x NCCL algorithm: waived exactly when the algorithm would not be forced.
  for (const auto& c : coll::collective_names()) {
    for (const auto& algo : algorithm_names()) {
      const auto why = nccl_algo_waiver(algo, c);
      if (algo == "auto" || algo == "flat" || algo == "hierarchical" || algo == "symmetric") {
        EXPECT_FALSE(why) << algo << " " << c;
        continue;
      }
      if (algo == "linear") {  // NCCL's own all-to-all: accepted where one runs, forced nowhere
        const NcclOp op = op_of_collective(c);
        EXPECT_EQ(why.has_value(), op != NcclOp::alltoall && op != NcclOp::alltoallv) << c;
        EXPECT_TRUE(algo_settings(algo, nccl_version_code(2, 28, 9)).forced_ops.empty());
        continue;
      }
      if (algo == "cb-multimem") {
        EXPECT_EQ(why.has_value(), c != "allreduce" && c != "reducescatter" && c != "allgather") << c;
        if (why) {
          EXPECT_NE(why->find("allreduce, reducescatter and allgather"), std::string::npos) << *why;
        }
        continue;
      }
      const bool forced = !algo_used_for(algo_settings(algo, nccl_version_code(2, 28, 9)), op_of_collective(c)).empty();
      EXPECT_EQ(why.has_value(), !forced) << algo << " " << c;
      if (why) {
        EXPECT_NE(why->find(algo), std::string::npos) << *why;
      }
    }
  }
  EXPECT_FALSE(nccl_algo_waiver("nvls", "allreduce"));
  EXPECT_FALSE(nccl_algo_waiver("ring", "broadcast"));
  const auto tree = nccl_algo_waiver("tree", "allgather");
  ASSERT_TRUE(tree);
  EXPECT_NE(tree->find("only for allreduce"), std::string::npos) << *tree;
  const auto p2p = nccl_algo_waiver("ring", "alltoall");
  ASSERT_TRUE(p2p);
  EXPECT_NE(p2p->find("point-to-point"), std::string::npos) << *p2p;
  EXPECT_TRUE(nccl_algo_waiver("nvls", "moe-dispatch"));
  EXPECT_EQ(op_of_collective("moe-combine"), NcclOp::alltoallv);
  EXPECT_EQ(op_of_collective("unknown"), NcclOp::none);
}

TEST(NcclHostMapping, BufferKinds) {
  const int v = nccl_version_code(2, 28, 9);
  const auto autos = algo_settings("auto", v);
  EXPECT_EQ(parse_buffer_kind_for_nccl("plain", autos), BufferKind::plain);
  EXPECT_EQ(parse_buffer_kind_for_nccl("registered", autos), BufferKind::registered);
  EXPECT_EQ(parse_buffer_kind_for_nccl("symmetric", autos), BufferKind::symmetric);
  const std::string host = input_error([&] { (void)parse_buffer_kind_for_nccl("host", autos); });
  EXPECT_NE(host.find("nccl"), std::string::npos) << host;
  EXPECT_NE(host.find("plain"), std::string::npos) << host;
  const auto sym = algo_settings("symmetric", v);
  EXPECT_EQ(parse_buffer_kind_for_nccl("symmetric", sym), BufferKind::symmetric);
  const std::string need = input_error([&] { (void)parse_buffer_kind_for_nccl("plain", sym); });
  EXPECT_NE(need.find("--buffers symmetric"), std::string::npos) << need;
  const auto mm = algo_settings("cb-multimem", v);
  EXPECT_EQ(parse_buffer_kind_for_nccl("symmetric", mm), BufferKind::symmetric);
  const std::string mm_need = input_error([&] { (void)parse_buffer_kind_for_nccl("registered", mm); });
  EXPECT_NE(mm_need.find("multimem"), std::string::npos) << mm_need;
  EXPECT_NE(mm_need.find("--buffers symmetric"), std::string::npos) << mm_need;
  // Unasked, the runner gives each algorithm the buffers it needs (plain memory for NCCL's forced
  // algorithms: on window buffers NCCL 2.28 would try its symmetric kernels first).
  EXPECT_EQ(default_nccl_buffers("cb-multimem"), "symmetric");
  EXPECT_EQ(default_nccl_buffers("symmetric"), "symmetric");
  for (const char* a : {"auto", "ring", "tree", "nvls", "nvlstree"}) EXPECT_EQ(default_nccl_buffers(a), "plain") << a;
  EXPECT_NE(input_error([&] { (void)parse_buffer_kind_for_nccl("pinned", autos); }), "<no InputError>");
  EXPECT_EQ(to_string(BufferKind::registered), "registered");
  // Every kind the CLI accepts except host is an NCCL kind.
  for (const auto& k : buffer_kinds()) {
    if (k != "host") {
      EXPECT_NO_THROW((void)parse_buffer_kind_for_nccl(k, autos)) << k;
    }
  }
}

TEST(NcclHostMapping, SymmetricWindowSizes) {
  EXPECT_EQ(symmetric_bytes(0), 4096u);
  EXPECT_EQ(symmetric_bytes(1), 4096u);
  EXPECT_EQ(symmetric_bytes(4096), 4096u);
  EXPECT_EQ(symmetric_bytes(4097), 8192u);
  EXPECT_EQ(symmetric_bytes(128u << 20), 128u << 20);
}

// Every rank's list from the all-to-all-v family's own shapes: each send has the matching
// receive on its peer (same count), offsets stay inside the buffers, zero counts are skipped.
TEST(NcclHostMapping, AlltoallvSendRecvListsMatchAcrossRanks) {
  const auto& a2av = coll::find_collective("alltoallv");
  for (int n : {1, 2, 3, 4, 7, 16}) {
    for (std::uint64_t bytes : {0ULL, 4ULL, 1000ULL, 1ULL << 20}) {
      std::vector<coll::Shape> shapes;
      std::vector<std::vector<P2pOp>> ops;
      for (int r = 0; r < n; ++r) {
        shapes.push_back(a2av.shape(bytes, Dtype::float32, r, n));
        const auto& s = shapes.back();
        ops.push_back(alltoallv_ops(r, n, s.send_counts, s.send_displs, s.recv_counts, s.recv_displs));
      }
      std::map<std::pair<int, int>, std::size_t> sent;
      std::map<std::pair<int, int>, std::size_t> received;
      for (int r = 0; r < n; ++r) {
        const auto& s = shapes[static_cast<std::size_t>(r)];
        std::size_t send_total = 0;
        std::size_t recv_total = 0;
        for (const auto& op : ops[static_cast<std::size_t>(r)]) {
          ASSERT_GT(op.count, 0u);
          ASSERT_GE(op.peer, 0);
          ASSERT_LT(op.peer, n);
          if (op.send) {
            EXPECT_LE(op.offset_elems + op.count, s.send_elems);
            EXPECT_EQ(op.offset_elems, s.send_displs[static_cast<std::size_t>(op.peer)]);
            EXPECT_TRUE(sent.emplace(std::make_pair(r, op.peer), op.count).second)
                << "two sends " << r << "->" << op.peer;
            send_total += op.count;
          } else {
            EXPECT_LE(op.offset_elems + op.count, s.recv_elems);
            EXPECT_EQ(op.offset_elems, s.recv_displs[static_cast<std::size_t>(op.peer)]);
            EXPECT_TRUE(received.emplace(std::make_pair(op.peer, r), op.count).second);
            recv_total += op.count;
          }
        }
        EXPECT_EQ(send_total, s.send_elems) << "n=" << n << " rank " << r;
        EXPECT_EQ(recv_total, s.recv_elems) << "n=" << n << " rank " << r;
      }
      EXPECT_EQ(sent, received) << "n=" << n << " bytes " << bytes;
    }
  }
}

TEST(NcclHostMapping, AlltoallvListOrderAndZeroCounts) {
  const std::vector<std::size_t> send_counts{3, 0, 5};
  const std::vector<std::size_t> send_displs{0, 3, 3};
  const std::vector<std::size_t> recv_counts{2, 4, 0};
  const std::vector<std::size_t> recv_displs{0, 2, 6};
  const auto ops = alltoallv_ops(1, 3, send_counts, send_displs, recv_counts, recv_displs);
  // i=0: self (send 0 elements: skipped; recv 4 from self), i=1: send to 2, recv from 0;
  // i=2: send to 0, recv from 2 (0: skipped).
  const std::vector<P2pOp> expected{{1, false, 2, 4}, {2, true, 3, 5}, {0, false, 0, 2}, {0, true, 0, 3}};
  EXPECT_EQ(ops, expected);
  const std::vector<std::size_t> two{1, 1};
  const std::string msg = input_error([&] { (void)alltoallv_ops(0, 3, two, two, two, two); });
  EXPECT_NE(msg.find("3 ranks"), std::string::npos) << msg;
}

TEST(NcclHostMapping, DeviceByLocalRank) {
  std::string why;
  EXPECT_EQ(device_for_local_rank(0, 1, 1, why), 0);
  EXPECT_EQ(device_for_local_rank(3, 8, 8, why), 3);
  EXPECT_FALSE(device_for_local_rank(0, 1, 0, why));
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
  EXPECT_FALSE(device_for_local_rank(2, 4, 2, why));
  EXPECT_NE(why.find("one rank per GPU"), std::string::npos) << why;
  EXPECT_NE(why.find("4 ranks"), std::string::npos) << why;
}

TEST(NcclHostMapping, OpNames) {
  EXPECT_EQ(to_string(NcclOp::reducescatter), "reducescatter");
  EXPECT_EQ(to_string(NcclOp::alltoallv), "alltoallv");
}

}  // namespace
