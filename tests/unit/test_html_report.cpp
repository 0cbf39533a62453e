// HTML reports and the SVG chart renderer: structure (one table row per case, per measured and
// per projected point, per verdict), SVG element counts (markers, hollow projected markers,
// dashed bound lines, log2 byte ticks), escaping of everything taken from input (a host named
// <script>, a YAML description with an <img onerror>), the "projected" labels, and the
// verdict.json reader (round trip, and errors naming the file). Pure C++.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/accept/html.hpp"
#include "collbench/accept/writers.hpp"
#include "collbench/core/error.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/html.hpp"
#include "collbench/report/svg.hpp"
#include "collbench/scaling/weak_scaling.hpp"
#include "collbench/stats/summary.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using namespace collbench::report;
using namespace collbench::scaling;
using record::CaseRecord;

namespace {

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

const std::string kEvilHost = "<script>alert('host')</script>";
const std::string kEvilDescription = "nightly <img src=x onerror=alert(1)> & \"quoted\"";

CaseRecord make_case(int n, std::uint64_t bytes, double p50_us) {
  return fixtures::allreduce_record(n, bytes, p50_us);
}

using fixtures::set_model;

record::InputFile make_file(const std::string& path, std::vector<CaseRecord> cases,
                            const std::vector<std::string>& hosts) {
  record::InputFile f;
  f.path = path;
  record::RunHeader h;
  h.run_id = cases.front().run_id;
  h.started_at = "2026-01-02T03:04:05Z";
  h.tool_version = "0.1.0";
  h.git_sha = "abc1234";
  h.argv = {"collbench", "run", "allreduce", "-b", "1K", "--out", "my file.jsonl"};
  h.launcher = "mpiexec";
  h.mpi_library = "MPICH 4.0.2";
  h.nccl_version = "2.21.5";
  h.config = {{"name", "nightly"}, {"description", kEvilDescription}};
  h.system = {{"name", "cpu-local"}, {"digest", "d1g35t"}};
  h.env = {{"NCCL_DEBUG", "INFO"}};
  for (std::size_t i = 0; i < hosts.size(); ++i)
    h.hosts.push_back({static_cast<int>(i), hosts[i], 100, {}, {}, {}, {}});
  f.header = h;
  f.header_line = 1;
  for (std::size_t i = 0; i < cases.size(); ++i) f.case_lines.push_back(static_cast<int>(i) + 2);
  f.cases = std::move(cases);
  return f;
}

// Four sizes at 2 ranks with model fields, one failed case, one waived case.
record::InputFile sweep_file() {
  std::vector<CaseRecord> cases;
  for (std::uint64_t b : {1024ull, 8192ull, 65536ull, 524288ull}) {
    auto r = make_case(2, b, 5.0 + static_cast<double>(b) / 1e4);
    set_model(r, "cpu-local", 0.5 * r.time_us->p50, 0.7 * r.time_us->p50);
    cases.push_back(r);
  }
  auto failed = make_case(2, 4u << 20, 900.0);
  failed.status = "failed";
  failed.wrong_total = 3;
  failed.reason = "3 wrong elements <rank 1>";
  cases.push_back(failed);
  auto waived = make_case(2, 8u << 20, 1.0);
  waived.status = "waived";
  waived.time_us.reset();
  waived.reason = "nvls needs a GPU";
  cases.push_back(waived);
  return make_file("sweep.jsonl", cases, {kEvilHost, kEvilHost});
}

HtmlContext ctx() {
  return {"collbench 0.1.0 (git abc1234)", "2026-01-02T03:05:00Z", {"collbench", "report", "x"}};
}

}  // namespace

// ---- escaping ------------------------------------------------------------------------------------

TEST(HtmlReport, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(html::escape("<script>alert(\"x\") & 'y'</script>"),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
  EXPECT_EQ(html::escape(std::string("a\x01"
                                     "b\tc\n",
                                     6)),
            "ab\tc\n");  // control characters dropped
  EXPECT_EQ(html::shell_join({"collbench", "run", "--out", "my file.jsonl", "it's"}),
            "collbench run --out 'my file.jsonl' 'it'\\''s'");
}

TEST(HtmlReport, HostNamesAndDescriptionsCannotInjectMarkup) {
  const std::vector<record::InputFile> files{sweep_file()};
  const std::string page = render_cases_html(files, nullptr, ctx());
  EXPECT_EQ(count(page, "<script"), 0u) << "a host name became markup";
  EXPECT_EQ(count(page, "<img"), 0u) << "a YAML description became markup";
  EXPECT_GE(count(page, "&lt;script&gt;alert(&#39;host&#39;)&lt;/script&gt;"), 1u);
  EXPECT_GE(count(page, "nightly &lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;"), 1u);
  EXPECT_GE(count(page, "3 wrong elements &lt;rank 1&gt;"), 1u);
  // Defence in depth: the page forbids scripts and remote loads.
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

// ---- case pages ------------------------------------------------------------------------------------

TEST(HtmlReport, CasePageHasOneRowPerCaseChartsAndProvenance) {
  const std::vector<record::InputFile> files{sweep_file()};
  const std::string page = render_cases_html(files, nullptr, ctx());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<tr class=\"case\">"), 6u);
  // One chart (one group of sizes): 4 measured markers, the bound dashed and the expected dotted.
  EXPECT_EQ(count(page, "<svg class=\"chart\""), 1u);
  EXPECT_EQ(count(page, "class=\"marker\""), 4u);
  EXPECT_GE(count(page, "stroke-dasharray=\"7 4\""), 1u);
  EXPECT_NE(page.find("bound (model: cpu-local)"), std::string::npos);
  // log2 byte ticks
  EXPECT_NE(page.find(">1KiB<"), std::string::npos);
  EXPECT_NE(page.find(">512KiB<"), std::string::npos);
  // Verdicts of the checks and statuses
  EXPECT_GE(count(page, ">PASS</span>"), 4u);
  EXPECT_GE(count(page, ">FAIL</span>"), 1u);
  EXPECT_GE(count(page, ">waived</span>"), 1u);
  // Provenance from the run header
  for (const char* s : {"abc1234", "MPICH 4.0.2", "2.21.5", "cpu-local", "d1g35t", "NCCL_DEBUG",
                        "collbench run allreduce -b 1K --out &#39;my file.jsonl&#39;", "mpiexec"}) {
    EXPECT_NE(page.find(s), std::string::npos) << s;
  }
}

TEST(HtmlReport, ComparisonSectionHasARowPerMatchedCase) {
  record::InputFile a = sweep_file(), b = sweep_file();
  b.path = "after.jsonl";
  for (auto& r : b.cases) r.run_id = "run-b";
  const std::vector<record::InputFile> files{a, b};
  const compare::Comparison c = compare::compare_files(files, compare::CompareBy::run);
  const std::string page = render_cases_html(files, &c, ctx());
  EXPECT_EQ(count(page, "<tr class=\"comparison-row\">"), c.rows.size());
  EXPECT_EQ(c.rows.size(), 4u);
  EXPECT_NE(page.find("Comparison by run"), std::string::npos);
}

// ---- weak scaling ----------------------------------------------------------------------------------

TEST(HtmlReport, WeakScalingShowsMeasuredSolidAndProjectedHollowAndLabelled) {
  std::vector<record::InputFile> files;
  for (const int n : {2, 4, 8}) {
    auto r = make_case(n, 1000000, 10.0 + 5.0 * (n / 2 - 1));
    set_model(r, "gb300-nvl72", 0.25 * r.time_us->p50, 0.5 * r.time_us->p50);
    files.push_back(make_file("n" + std::to_string(n) + ".jsonl", {r}, std::vector<std::string>(n, "node")));
  }
  WeakScalingOptions o;
  o.requested_ranks = {16, 64};
  o.system = model::load_system_profile("gb300-nvl72");
  o.anomaly_below_pct = 0.0;  // the fixture runs at 25% of its bound: not an anomaly here
  const WeakScalingReport rep = build_weak_scaling(files, o);
  ASSERT_EQ(rep.groups.size(), 1u);
  ASSERT_EQ(rep.groups[0].projected.size(), 2u);
  const std::string page = render_weak_scaling_html(rep, files, ctx());
  EXPECT_EQ(count(page, "<tr class=\"measured-point\">"), 3u);
  EXPECT_EQ(count(page, "<tr class=\"projected\">"), 2u);
  EXPECT_NE(page.find("Projected (model, not measured)"), std::string::npos);
  // Two charts (E(N), % bound): 3 measured markers each (E(2) = 1 is the reference), 2 hollow
  // projected markers each: N=16 labelled "projected", N=64 (8x the largest measured N, beyond 4x)
  // "model only", in a dashed series of its own.
  EXPECT_EQ(count(page, "class=\"marker hollow\""), 4u);
  EXPECT_EQ(count(page, "class=\"point-label\""), 4u);
  EXPECT_GE(count(page, ">projected</text>"), 2u);
  EXPECT_GE(count(page, ">model only</text>"), 2u);
  EXPECT_NE(page.find("model only (&gt; 4x measured N)"), std::string::npos);
  EXPECT_NE(page.find("model only: beyond 4x"), std::string::npos);
  EXPECT_NE(page.find(">16 (projected)<"), std::string::npos);
  EXPECT_NE(page.find("perfect weak scaling (1.0)"), std::string::npos);
  EXPECT_NE(page.find("bound (100%)"), std::string::npos);
  // Rank-count ticks are numbers, not bytes.
  EXPECT_NE(page.find(">64<"), std::string::npos);
  // Plus one busbw-vs-size chart per input file.
  EXPECT_EQ(count(page, "<svg class=\"chart\""), 2u + 3u);
}

// ---- SVG ---------------------------------------------------------------------------------------------

TEST(HtmlSvg, LineChartDrawsWhatItIsGiven) {
  svg::LineChart c;
  c.title = "t <b>";
  c.series.push_back({"measured",
                      {{1024, 1.0, 0.9, 1.1}, {2048, 2.0, {}, {}}, {4096, 3.0, {}, {}}},
                      svg::Stroke::solid,
                      true,
                      false,
                      "",
                      0});
  c.series.push_back({"projected", {{8192, 3.5, 3.0, 4.0}}, svg::Stroke::dashed, true, true, "projected", 1});
  c.references.push_back({5.0, "bound", svg::Stroke::dashed});
  const std::string s = svg::render_line_chart(c);
  EXPECT_EQ(count(s, "<svg"), 1u);
  EXPECT_EQ(count(s, "class=\"marker\""), 3u);
  EXPECT_EQ(count(s, "class=\"marker hollow\""), 1u);
  EXPECT_EQ(count(s, "class=\"errorbar\""), 2u);
  EXPECT_EQ(count(s, ">projected</text>"), 2u);  // the point label and the legend
  EXPECT_EQ(count(s, "<g class=\"reference\">"), 1u);
  EXPECT_NE(s.find("t &lt;b&gt;"), std::string::npos);
  EXPECT_EQ(s.find("<b>"), std::string::npos);
  for (const char* tick : {">1KiB<", ">2KiB<", ">4KiB<", ">8KiB<"}) EXPECT_NE(s.find(tick), std::string::npos) << tick;
}

TEST(HtmlSvg, EmptyChartSaysSoAndNiceTicksAreRound) {
  svg::LineChart c;
  c.title = "nothing";
  EXPECT_NE(svg::render_line_chart(c).find("no data to plot"), std::string::npos);
  EXPECT_EQ(svg::nice_ticks(0.0, 9.3, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(svg::nice_ticks(0.0, 1.0, 5), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0}));
  const auto t = svg::nice_ticks(3.0, 3.0, 5);  // a flat line still gets an axis
  EXPECT_LT(t.front(), 3.0);
  EXPECT_GT(t.back(), 3.0);
}

TEST(HtmlSvg, BarChartColoursByVerdict) {
  svg::BarChart c;
  c.title = "bars";
  c.bars = {{"a", 1.5, "pass", ""}, {"b <x>", 0.4, "fail", ""}};
  c.reference = svg::ReferenceLine{1.0, "threshold", svg::Stroke::dashed};
  const std::string s = svg::render_bar_chart(c);
  EXPECT_EQ(count(s, "class=\"bar pass\""), 1u);
  EXPECT_EQ(count(s, "class=\"bar fail\""), 1u);
  EXPECT_NE(s.find("b &lt;x&gt;"), std::string::npos);
  EXPECT_NE(s.find("stroke-dasharray=\"7 4\""), std::string::npos);
}

// ---- acceptance ----------------------------------------------------------------------------------------

namespace {

accept::AcceptReport sample_accept() {
  using namespace collbench::accept;
  AcceptReport r;
  r.profile = "demo";
  r.source = "profiles/acceptance/demo.yaml";
  r.description = kEvilDescription;
  r.system = "cpu-local";
  r.num_ranks = 4;
  r.started_at = "2026-01-02T03:04:05Z";
  r.finished_at = "2026-01-02T03:04:25Z";
  r.record_files = {"out/records-default.jsonl"};
  Row pass;
  pass.check = "allreduce-bw";
  pass.collective = "allreduce";
  pass.bytes = 1u << 20;
  pass.domain_label = "all (ranks 0-3)";
  pass.num_ranks = 4;
  pass.busbw = 3.5;
  pass.bound_busbw_gbps = 7.0;
  pass.expected_busbw_gbps = 5.0;
  pass.primary_metric = "busbw_gbps";
  pass.limits.push_back({"fraction_of_expected", 0.5, 2.5, "busbw_gbps", 3.5, true, true, ""});
  pass.verdict = Verdict::pass;
  pass.reason = "busbw 3.5 GB/s >= 2.5 GB/s";
  Row fail = pass;
  fail.check = "latency";
  fail.bytes = 8;
  fail.time = 50.0;
  fail.primary_metric = "time_us";
  fail.limits = {{"max_time_us", 20.0, 20.0, "time_us", 50.0, true, false, ""}};
  fail.verdict = Verdict::fail;
  fail.reason = "time 50 us > 20 us";
  fail.evidence = {"rank 3 on " + kEvilHost + " is 2.1x the median"};
  Row waived = pass;
  waived.check = "nvls";
  waived.limits = {{"fraction_of_bound", 0.8, std::nullopt, "busbw_gbps", std::nullopt, false, false, "no bound"}};
  waived.verdict = Verdict::waived;
  waived.reason = "algorithm 'nvls' is not available on the mpi backend";
  r.rows = {pass, fail, waived};
  return r;
}

}  // namespace

TEST(HtmlAccept, PageShowsEveryVerdictEscaped) {
  const auto r = sample_accept();
  const std::string page = accept::render_accept_html(r, {}, ctx());
  EXPECT_EQ(count(page, "<tr class=\"verdict-row"), 3u);
  EXPECT_EQ(count(page, "<tr class=\"verdict-row pass\">"), 1u);
  EXPECT_EQ(count(page, "<tr class=\"verdict-row fail\">"), 1u);
  EXPECT_EQ(count(page, "<tr class=\"verdict-row waived\">"), 1u);
  EXPECT_NE(page.find("<title>Acceptance demo: FAIL</title>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"verdict fail\">FAIL</span>"), std::string::npos);
  EXPECT_GE(count(page, ">WAIVED</span>"), 1u);
  // Two judged rows are charted; the waived one is not.
  EXPECT_EQ(count(page, "class=\"bar pass\""), 1u);
  EXPECT_EQ(count(page, "class=\"bar fail\""), 1u);
  EXPECT_EQ(count(page, "<script"), 0u);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_NE(page.find("rank 3 on &lt;script&gt;"), std::string::npos);
  EXPECT_NE(page.find("provenance"), std::string::npos);
}

// An interference ratio is a ceiling like a time: 1.1 measured under a 1.3 ceiling has headroom
// 1.3 / 1.1 = 1.18 (above the limit line), and 1.5 over it has 1.3 / 1.5 = 0.867 (below).
TEST(HtmlAccept, InterferenceCeilingHeadroomIsLimitOverMeasured) {
  auto r = sample_accept();
  accept::Row ok = r.rows[0];
  ok.check = "ep-dp";
  ok.collective = "ep-dp-concurrent";
  ok.interference = 1.1;
  ok.primary_metric = "interference";
  ok.limits = {{"max_interference", 1.3, 1.3, "interference", 1.1, true, true, ""}};
  accept::Row bad = ok;
  bad.check = "ep-dp-bad";
  bad.interference = 1.5;
  bad.limits = {{"max_interference", 1.3, 1.3, "interference", 1.5, true, false, ""}};
  bad.verdict = accept::Verdict::fail;
  r.rows = {ok, bad};
  const std::string page = accept::render_accept_html(r, {}, ctx());
  EXPECT_NE(page.find(">1.18<"), std::string::npos) << page;
  EXPECT_NE(page.find(">0.867<"), std::string::npos) << page;
  EXPECT_NE(page.find("interference 1.1"), std::string::npos);
  EXPECT_NE(page.find("&lt;= 1.3 interference"), std::string::npos);
  // And the JSON keeps the value and the metric the table shows.
  const auto back = accept::accept_from_json(accept::accept_to_json(r), "verdict.json");
  ASSERT_TRUE(back.rows[0].interference);
  EXPECT_DOUBLE_EQ(*back.rows[0].interference, 1.1);
  EXPECT_EQ(back.rows[0].primary_metric, "interference");
}

TEST(HtmlAccept, VerdictJsonRoundTrips) {
  const auto r = sample_accept();
  const auto back = accept::accept_from_json(accept::accept_to_json(r), "verdict.json");
  EXPECT_EQ(accept::render_accept_markdown(back), accept::render_accept_markdown(r));
  EXPECT_EQ(accept::render_accept_table(back), accept::render_accept_table(r));
  EXPECT_EQ(accept::accept_to_json(back), accept::accept_to_json(r));
}

TEST(HtmlAccept, WrongKindsOfJsonNameTheFile) {
  const auto expect_error = [](const nlohmann::json& j, const std::string& part) {
    try {
      accept::accept_from_json(j, "some/verdict.json");
      ADD_FAILURE() << "no error for " << j.dump();
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("some/verdict.json"), std::string::npos) << what;
      EXPECT_NE(what.find(part), std::string::npos) << what;
    }
  };
  expect_error(nlohmann::json::array(), "not a JSON object");
  expect_error({{"schema", "collbench.weak_scaling/1"}}, "schema is 'collbench.weak_scaling/1'");
  expect_error({{"schema", "collbench.result/1"}, {"run_id", "x"}}, "collbench.accept/1");
  auto j = accept::accept_to_json(sample_accept());
  j.erase("rows");
  expect_error(j, "missing key 'rows'");
  j = accept::accept_to_json(sample_accept());
  j["rows"][1]["verdict"] = "MAYBE";
  expect_error(j, "rows[1]");
}
