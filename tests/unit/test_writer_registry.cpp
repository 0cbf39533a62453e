// The writer registries (report/writer.hpp, report/console_writer.hpp): names in registration
// order, an unknown name's error, FMT[=PATH] targets, and a multiplex that writes each target.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collbench/accept/writers.hpp"
#include "collbench/core/error.hpp"
#include "collbench/report/console_writer.hpp"
#include "collbench/report/table.hpp"
#include "collbench/report/writer.hpp"
#include "collbench/report/writer_registries.hpp"
#include "record_fixtures.hpp"

namespace collbench::report {
namespace {

namespace fs = std::filesystem;

struct Numbers {
  int a = 0, b = 0;
};

WriterRegistry<Numbers> numbers_registry() {
  WriterRegistry<Numbers> r("numbers format");
  r.add("sum", [](const Numbers& n) { return std::to_string(n.a + n.b) + "\n"; });
  r.add("pair", [](const Numbers& n) { return std::to_string(n.a) + "," + std::to_string(n.b) + "\n"; });
  return r;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("collbench-writer-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(WriterRegistry, NamesInRegistrationOrderAndRenders) {
  const auto r = numbers_registry();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"sum", "pair"}));
  EXPECT_EQ(r.make("sum")->render({2, 3}), "5\n");
  EXPECT_EQ(r.make("pair")->render({2, 3}), "2,3\n");
}

TEST(WriterRegistry, UnknownNameNamesTheAcceptedOnes) {
  const auto r = numbers_registry();
  try {
    (void)r.make("summ");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown numbers format 'summ'; accepted: sum, pair (did you mean 'sum'?)");
  }
}

TEST(OutputTargets, ConsoleDefaultThenFilesInOrder) {
  const std::vector<std::string> names{"sum", "pair"};
  auto t = parse_output_targets({}, names, "sum");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].format, "sum");
  EXPECT_FALSE(t[0].path);

  const std::string file = scratch("a.txt").string();
  t = parse_output_targets({"pair=" + file, "pair"}, names, "sum");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].format, "pair");  // the console first
  EXPECT_FALSE(t[0].path);
  EXPECT_EQ(t[1].format, "pair");
  EXPECT_EQ(t[1].path, file);
}

TEST(OutputTargets, RefusesUnknownFormatsTwoConsolesAndBadPaths) {
  const std::vector<std::string> names{"sum", "pair"};
  try {
    (void)parse_output_targets({"xml"}, names, "sum");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--format 'xml': unknown format 'xml'; accepted: sum, pair");
  }
  EXPECT_THROW((void)parse_output_targets({"sum", "pair"}, names, "sum"), InputError);
  EXPECT_THROW((void)parse_output_targets({"sum="}, names, "sum"), InputError);
  EXPECT_THROW((void)parse_output_targets({"sum=/no/such/folder/x.txt"}, names, "sum"), InputError);
  EXPECT_THROW((void)parse_output_targets({"sum=" + fs::temp_directory_path().string()}, names, "sum"), InputError);
}

TEST(WriterMultiplex, WritesEachTargetItsFormat) {
  const auto r = numbers_registry();
  const fs::path a = scratch("sum.txt"), b = scratch("pair.txt");
  const std::vector<OutputTarget> targets{{"sum", a.string()}, {"pair", b.string()}};
  const WriterMultiplex<Numbers> mux(r, targets);
  EXPECT_EQ(mux.size(), 2u);
  mux.write({4, 5});
  EXPECT_EQ(read(a), "9\n");
  EXPECT_EQ(read(b), "4,5\n");
}

TEST(ConsoleMultiplex, StreamsEachFormatToItsFile) {
  const fs::path csv = scratch("run.csv"), jsonl = scratch("run.jsonl");
  ConsoleMultiplex mux({{"csv", csv.string()}, {"jsonl", jsonl.string()}}, ConsoleOptions{});
  EXPECT_FALSE(mux.silent());
  const record::CaseRecord r = fixtures::allreduce_record(2, 1024, 10.0);
  mux.begin(record::RunHeader{});
  mux.add(r);
  mux.end({r});
  EXPECT_EQ(read(csv), csv_header() + csv_row(r));
  EXPECT_EQ(read(jsonl), record::to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

TEST(ConsoleMultiplex, NoneIsSilentAndTheLayoutNeedsATable) {
  EXPECT_TRUE(ConsoleMultiplex({{"none"}}, ConsoleOptions{}).silent());
  EXPECT_EQ(console_writer_names(), (std::vector<std::string>{"table", "jsonl", "csv", "none"}));
  const ConsoleOptions nccl{"nccl-tests", true, false};
  EXPECT_NO_THROW(check_console_targets({{"none"}, {"table", "t.txt"}}, nccl));
  try {
    check_console_targets({{"csv"}}, nccl);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--layout nccl-tests applies to --format table, not --format csv");
  }
}

// Every subcommand's registry: the names its --format accepts.
TEST(WriterRegistries, EverySubcommandsNames) {
  using V = std::vector<std::string>;
  EXPECT_EQ(cases_writers().names(), (V{"table", "markdown", "csv", "html", "none"}));
  EXPECT_EQ(gate_writers().names(), (V{"table", "json", "markdown", "junit", "none"}));
  EXPECT_EQ(locate_writers().names(), (V{"text", "json", "none"}));
  EXPECT_EQ(accept::accept_writers().names(), (V{"table", "json", "markdown", "junit", "none"}));
  // model's one --format serves both: the same names.
  EXPECT_EQ(model_writers().names(), moe_model_writers().names());
  EXPECT_EQ(model_writers().names(), (V{"table", "json", "csv", "none"}));
}

}  // namespace
}  // namespace collbench::report
