// Input checks of issue 20 items 1 and 5 and issue 21 item 4, exact messages: YAML keys given
// twice, negative and NaN times in results, directories given as files, broadcast roots, sizes
// that round down to 0 B, and buffers that do not fit in a node's memory. Pure.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/input_file.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/value_checks.hpp"
#include "collbench/run/case_checks.hpp"
#include "collbench/run/memory_budget.hpp"
#include "collbench/yamlio/reader.hpp"

using namespace collbench;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

plan::Case make_case(const std::string& collective, std::uint64_t bytes, Dtype dtype = Dtype::float32) {
  plan::Case c;
  c.collective = collective;
  c.bytes = bytes;
  c.dtype = dtype;
  return c;
}

plan::Sweep sweep_of(std::vector<plan::Case> cases) {
  plan::Sweep s;
  s.name = "t";
  s.source = "<command line>";
  s.cases = std::move(cases);
  return s;
}

std::vector<std::uint64_t> sizes_of(const plan::Sweep& s) {
  std::vector<std::uint64_t> out;
  for (const auto& c : s.cases) out.push_back(c.bytes);
  return out;
}

}  // namespace

// ---- YAML keys given twice -------------------------------------------------------------------

TEST(UniqueKeys, NameFileLineDottedKeyAndTheFirstLine) {
  const auto check = [](const std::string& text) { return error_of([&] { yamlio::check_structure(text, "s.yaml"); }); };
  EXPECT_EQ(check("a: 1\nb: 2\n"), "no error");
  EXPECT_EQ(check("a: 1\na: 2\n"), "s.yaml:2: key 'a': given twice (first on line 1); keep one");
  EXPECT_EQ(check("cases:\n  - collective: x\n    bytes: 8\n  - collective: y\n    bytes: 8\n    bytes: 16\n"),
            "s.yaml:6: key 'cases[1].bytes': given twice (first on line 5); keep one");
  EXPECT_EQ(check("m:\n  r: {s: 1, s: 2}\n"), "s.yaml:2: key 'm.r.s': given twice (first on line 2); keep one");
  EXPECT_EQ(check("a: {x: 1}\nb: {x: 1}\n"), "no error");  // the same key in two mappings
}

TEST(UniqueKeys, ASweepFileRefusesAKeyGivenTwice) {
  EXPECT_EQ(error_of([] {
              (void)plan::parse_sweep(
                  "name: d\ndefaults:\n  dtype: float32\n  dtype: int32\ncases:\n"
                  "  - collective: allreduce\n    bytes: 8\n",
                  "d.yaml");
            }),
            "d.yaml:4: key 'defaults.dtype': given twice (first on line 3); keep one");
}

// ---- results: negative and NaN times, directories ----------------------------------------------

TEST(ResultValues, NegativeTimesAndRatesNameFileLineAndKey) {
  const auto parse = [](const std::string& line) {
    return error_of([&] {
      std::vector<std::string> warnings;
      (void)record::parse_jsonl(line + "\n", "r.jsonl", warnings);
    });
  };
  EXPECT_EQ(parse(R"({"kind":"case","time_us":{"p50":1.5,"min":0}})"), "no error");
  EXPECT_EQ(parse(R"({"kind":"case","time_us":{"p50":-3.5}})"),
            "r.jsonl:1: key 'time_us.p50': -3.5 is negative; times and rates are numbers >= 0");
  EXPECT_EQ(parse(R"({"kind":"case","samples_us":[1,2,-1]})"),
            "r.jsonl:1: key 'samples_us[2]': -1 is negative; times and rates are numbers >= 0");
  EXPECT_EQ(parse(R"({"kind":"case","per_rank":{"mean_us":[1],"wait_us":[-0.5]}})"),
            "r.jsonl:1: key 'per_rank.wait_us[0]': -0.5 is negative; times and rates are numbers >= 0");
  EXPECT_EQ(parse(R"({"kind":"case","busbw_gbps":-2})"),
            "r.jsonl:1: key 'busbw_gbps': -2 is negative; times and rates are numbers >= 0");
  // Other kinds, and keys that may be negative (overlap's exposed time), are not times checked here.
  EXPECT_EQ(parse(R"({"kind":"run_header","time_us":{"p50":-1}})"), "no error");
  EXPECT_EQ(parse(R"({"kind":"case","overlap":{"exposed_us":-1}})"), "no error");
}

TEST(ResultValues, NanAndInfinityNameTheKeyNotAColumn) {
  const auto parse = [](const std::string& text) {
    return error_of([&] {
      std::vector<std::string> warnings;
      (void)record::parse_jsonl(text, "r.jsonl", warnings);
    });
  };
  EXPECT_EQ(parse("{\"kind\":\"case\"}\n{\"kind\":\"case\",\"time_us\":{\"p5\":1,\"p50\":NaN}}\n"),
            "r.jsonl:2: key 'time_us.p50': NaN is not a JSON number; times and rates are finite numbers >= 0");
  // The first one on the line, also when the line lacks its newline.
  EXPECT_EQ(parse("{\"kind\":\"case\",\"samples_us\":[1,-Infinity],\"busbw_gbps\":NaN}"),
            "r.jsonl:1: key 'samples_us[1]': -Infinity is not a JSON number; times and rates are finite numbers >= 0");
  const auto nf = record::find_non_finite(R"({"reason":"NaN here","algbw_gbps":Infinity})");
  ASSERT_TRUE(nf.has_value());
  EXPECT_EQ(nf->key, "algbw_gbps");
  EXPECT_EQ(nf->token, "Infinity");
  EXPECT_FALSE(record::find_non_finite(R"({"reason":"NaN, \"Infinity\""})").has_value());
  EXPECT_FALSE(record::find_non_finite(R"({"a":NaN,)").has_value());  // not JSON apart from it either
}

TEST(InputFile, ADirectoryIsBadInputNamingThePath) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(error_of([&] { (void)read_input_file(dir, "policy file", "a file"); }),
            "policy file '" + dir + "' is a directory; give a file");
  EXPECT_EQ(error_of([&] { (void)record::read_results(dir); }),
            "results file '" + dir + "' is a directory; give a JSONL file");
  EXPECT_EQ(error_of([&] { (void)plan::load_sweep_file(dir); }),
            "sweep file '" + dir + "' is a directory; give a YAML file");
  EXPECT_EQ(error_of([] { (void)read_input_file("/nonexistent/p.yaml", "policy file", "a file"); }),
            "cannot read policy file '/nonexistent/p.yaml': No such file or directory");
}

// ---- broadcast roots -----------------------------------------------------------------------------

TEST(CaseChecks, ABroadcastRootOutsideItsCommunicatorIsRefused) {
  const Placement two = placement_from_sizes(2, {2});
  plan::Case c = make_case("broadcast", 8);
  const auto& bcast = coll::find_collective("broadcast");
  c.root = 1;
  EXPECT_EQ(error_of([&] { run::check_root(c, bcast, two, "<command line>"); }), "no error");
  c.root = 2;
  EXPECT_EQ(error_of([&] { run::check_root(c, bcast, two, "<command line>"); }),
            "-r/--root 2 is not a rank of the broadcast communicator of 2 ranks; accepted: 0 to 1");
  c.root = -1;
  EXPECT_EQ(error_of([&] { run::check_root(c, bcast, two, "s.yaml"); }),
            "s.yaml: key 'root': -1 is not a rank of the broadcast communicator of 2 ranks; accepted: 0 to 1");
  // Under scope domain: a rank of every domain, so of the smallest one.
  c.root = 2;
  c.scope = Scope::domain;
  EXPECT_EQ(error_of([&] {
              run::check_root(c, bcast, placement_from_sizes(5, {3, 2}), "<command line>");
            }),
            "-r/--root 2 is not a rank of the broadcast communicator of 2 ranks; accepted: 0 to 1 (--scope domain: "
            "the smallest domain's ranks)");
  // Other collectives have no root.
  plan::Case ar = make_case("allreduce", 8);
  ar.root = 7;
  EXPECT_EQ(error_of([&] { run::check_root(ar, coll::find_collective("allreduce"), two, "<command line>"); }),
            "no error");
}

// ---- sizes that round down to 0 B ----------------------------------------------------------------

TEST(CaseChecks, SmallestMeasuredSizeFollowsEachFamilysRounding) {
  const auto smallest = [](const std::string& name, Dtype dtype, int n) {
    const plan::Case c = make_case(name, 8, dtype);
    return run::smallest_measured_size(c, coll::find_collective(name), placement_from_sizes(n, {n}), n);
  };
  EXPECT_EQ(smallest("alltoall", Dtype::float32, 2), 32u);  // 16 B per peer
  EXPECT_EQ(smallest("alltoall", Dtype::float64, 8), 128u);
  EXPECT_EQ(smallest("allgather", Dtype::float16, 3), 48u);
  EXPECT_EQ(smallest("reducescatter", Dtype::int64, 4), 64u);
  EXPECT_EQ(smallest("allreduce", Dtype::float64, 2), 8u);  // one element
  EXPECT_EQ(smallest("broadcast", Dtype::float32, 4), 4u);
}

TEST(CaseChecks, TooSmallSizesAreSkippedWithANoteOrRefusedWhenNothingIsLeft) {
  const Placement two = placement_from_sizes(2, {2});
  const auto checked =
      run::drop_empty_sizes(sweep_of({make_case("alltoall", 4), make_case("alltoall", 16), make_case("alltoall", 32),
                                      make_case("alltoall", 64), make_case("allreduce", 4)}),
                            two);
  EXPECT_EQ(sizes_of(checked.sweep), (std::vector<std::uint64_t>{32, 64, 4}));
  ASSERT_EQ(checked.notes.size(), 1u);
  EXPECT_EQ(checked.notes[0],
            "alltoall: 4 B and 16 B of float32 on 2 ranks round down to 0 B (bytes = per-rank send total (n x "
            "per-peer block), rounded down as nccl-tests does): skipped; the smallest size that measures something is "
            "32 B");
  EXPECT_EQ(error_of([&] { (void)run::drop_empty_sizes(sweep_of({make_case("alltoall", 4)}), two); }),
            "alltoall: 4 B of float32 on 2 ranks rounds down to 0 B (bytes = per-rank send total (n x per-peer "
            "block), rounded down as nccl-tests does); nothing to measure: the smallest accepted size is 32 B");
  // Every size of one collective too small is refused although another collective has sizes left.
  EXPECT_EQ(error_of([&] {
              (void)run::drop_empty_sizes(
                  sweep_of({make_case("allreduce", 64), make_case("allgather", 8), make_case("allgather", 16)}),
                  placement_from_sizes(4, {4}));
            }),
            "allgather: 8 B and 16 B of float32 on 4 ranks round down to 0 B (bytes = total output per rank (n x "
            "chunk), rounded down as nccl-tests does); nothing to measure: the smallest accepted size is 64 B");
}

// ---- memory ----------------------------------------------------------------------------------------

TEST(MemoryBudget, MemAvailableFromMeminfo) {
  EXPECT_EQ(run::parse_mem_available("MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   23591388 kB\n"),
            23591388ull * 1024);
  EXPECT_FALSE(run::parse_mem_available("MemTotal: 1 kB\n").has_value());
  EXPECT_FALSE(run::parse_mem_available("MemAvailable: lots\n").has_value());
}

TEST(MemoryBudget, HostBytesPerRankOfACase) {
  coll::Shape s;
  s.send_elems = 100;
  s.recv_elems = 25;
  EXPECT_EQ(run::host_buffer_bytes(s, Dtype::float32, false, true), 500u);   // send + receive
  EXPECT_EQ(run::host_buffer_bytes(s, Dtype::float32, true, true), 400u);    // in place: the larger
  EXPECT_EQ(run::host_buffer_bytes(s, Dtype::float32, false, false), 400u);  // device: one staging copy
  const Placement two = placement_from_sizes(2, {2});
  plan::Case big = make_case("allreduce", std::uint64_t{1} << 40);
  const auto need = run::sweep_memory_need(sweep_of({make_case("allreduce", 8), big}), two, 0);
  EXPECT_EQ(need.per_rank, std::uint64_t{2} << 40);
  EXPECT_EQ(need.case_label, "allreduce 1TiB float32 out of place");
  plan::Case rs = make_case("reducescatter", 1 << 20);
  rs.in_place = true;
  EXPECT_EQ(run::sweep_memory_need(sweep_of({rs}), two, 1).per_rank, 1u << 20);
}

TEST(MemoryBudget, TheRefusalNamesSizeNeedPerRankAndNodeAndWhatIsAvailable) {
  const run::MemoryNeed need{std::uint64_t{2} << 40, "allreduce 1TiB float32 out of place"};
  const run::MemoryAvailable avail{std::uint64_t{22} << 30, "MemAvailable in /proc/meminfo"};
  EXPECT_EQ(run::memory_refusal(need, 2, avail, "node-a").value_or("fits"),
            "not enough memory for allreduce 1TiB float32 out of place: its buffers need 2TiB per rank, 4TiB on host "
            "'node-a' (2 rank(s) x 2TiB), and 22GiB is available there (MemAvailable in /proc/meminfo); use smaller "
            "sizes (-b/-e, --tokens) or fewer ranks per node");
  // Per node, not per rank: 3 ranks x 8 GiB do not fit in 22 GiB, 2 do.
  const run::MemoryNeed eight{std::uint64_t{8} << 30, "x"};
  EXPECT_TRUE(run::memory_refusal(eight, 3, avail, "n").has_value());
  EXPECT_FALSE(run::memory_refusal(eight, 2, avail, "n").has_value());
}
