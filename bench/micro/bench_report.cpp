// Google Benchmark for reports at cluster scale (host only, one core): a results file of 1,024
// ranks x 40 sizes x 6 collectives with per-rank arrays (1,024 entries each) and 1,000 samples
// per case, generated here, then read, and a weak-scaling report built over it together with
// the same sweep at 256 and 512 ranks (bootstrap intervals, bounds, projections, JSON and
// Markdown). Target: < 5 s and < 1 GiB peak RSS. Figures: docs/report.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "collbench/model/system_profile.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/markdown.hpp"
#include "collbench/report/weak_scaling_json.hpp"
#include "collbench/scaling/weak_scaling.hpp"
#include "collbench/stats/summary.hpp"

namespace {

namespace fs = std::filesystem;
using namespace collbench;

constexpr int kSizes = 40;
constexpr int kSamples = 1000;
const char* const kOps[] = {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "alltoallv"};

double busbw_factor(const std::string& op, int n) {
  if (op == "allreduce") return 2.0 * (n - 1) / n;
  if (op == "broadcast") return 1.0;
  return static_cast<double>(n - 1) / n;
}

// One synthetic results file at num_ranks ranks (72-GPU racks, the last one partial), the
// slowest rank 5% behind the others; times follow an alpha-beta curve with lognormal noise.
record::RunHeader bench_header(int num_ranks) {
  record::RunHeader h;
  h.run_id = "bench-" + std::to_string(num_ranks);
  h.started_at = "2026-01-01T00:00:00Z";
  h.tool_version = "bench";
  h.git_sha = "bench";
  h.backends_built = {"mpi", "nccl"};
  h.config = nlohmann::json::object();
  h.launcher = "srun";
  h.system = {{"name", "gb300-nvl72"}, {"digest", "bench"}};
  for (int r = 0; r < num_ranks; ++r) h.hosts.push_back({r, "node-" + std::to_string(r / 4), 1000 + r, {}, {}, {}, {}});
  return h;
}

// Size index s of collective `op`: lognormal noise around a latency-bandwidth time, rank 517
// (mod N) 5% slow, a model at 60% of the bound.
record::CaseRecord bench_case(const char* op, int s, int num_ranks, const std::vector<int>& domains,
                              std::mt19937_64& rng, std::lognormal_distribution<double>& noise) {
  record::CaseRecord r;
  r.run_id = "bench-" + std::to_string(num_ranks);
  r.collective = op;
  r.redop = std::string(op) == "allreduce" || std::string(op) == "reducescatter" ? std::optional<std::string>("sum")
                                                                                 : std::nullopt;
  r.dtype = "bfloat16";
  r.backend = "nccl";
  r.algo_requested = "auto";
  r.scope = "global";
  r.timing = "isolated";
  r.buffers = "plain";
  r.bytes = static_cast<std::uint64_t>(std::llround(1024.0 * std::pow(2.0, s / 2.0))) / 2 * 2;
  r.count = r.bytes / 2;
  r.bytes_per_rank_send = r.bytes_per_rank_recv = r.bytes;
  r.num_ranks = num_ranks;
  r.domain_sizes = domains;
  r.num_domains = static_cast<int>(domains.size());
  const double base_us = 20.0 + 2.0 * std::log2(num_ranks) + static_cast<double>(r.bytes) / 40e3;
  r.samples_us.resize(kSamples);
  for (auto& v : r.samples_us) v = base_us * noise(rng);
  const auto sum = stats::summarize(r.samples_us);
  r.time_us = record::TimeStats::from(sum);
  r.iterations = kSamples;
  r.per_rank = record::PerRank{};
  for (int k = 0; k < num_ranks; ++k) {
    const double slow = k == 517 % num_ranks ? 1.05 : 1.0;
    r.per_rank->mean_us.push_back(base_us * slow * noise(rng));
    r.per_rank->max_us.push_back(1.3 * base_us * slow * noise(rng));
    r.per_rank->wait_us.push_back(0.5 * base_us / slow * noise(rng));
  }
  r.algbw_gbps = static_cast<double>(r.bytes) / (sum.p50 * 1e-6) / 1e9;
  r.busbw_gbps = r.algbw_gbps * busbw_factor(op, num_ranks);
  record::ModelFields m;
  m.system = "gb300-nvl72";
  m.bound_time_us = 0.6 * sum.p50;
  m.expected_time_us = 0.8 * sum.p50;
  m.bound_busbw_gbps = r.busbw_gbps / 0.6;
  m.expected_busbw_gbps = r.busbw_gbps / 0.8;
  m.efficiency = 0.6;
  r.model = m;
  r.checked = true;
  r.stop_reason = "max_iters";
  r.case_key = record::make_case_key(r);
  return r;
}

std::string write_results(const fs::path& dir, int num_ranks) {
  const fs::path path = dir / ("ranks" + std::to_string(num_ranks) + ".jsonl");
  std::ofstream out(path);
  std::mt19937_64 rng(static_cast<std::uint64_t>(num_ranks));
  std::lognormal_distribution<double> noise(0.0, 0.05);
  out << record::to_json(bench_header(num_ranks)).dump() << "\n";
  std::vector<int> domains;
  for (int left = num_ranks; left > 0; left -= 72) domains.push_back(std::min(left, 72));
  for (const char* op : kOps) {
    for (int s = 0; s < kSizes; ++s)
      out << record::to_json(bench_case(op, s, num_ranks, domains, rng, noise)).dump() << "\n";
  }
  return path.string();
}

struct Inputs {
  fs::path dir;
  std::vector<std::string> paths;  // 256, 512, 1,024 ranks
  ~Inputs() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const Inputs& inputs() {
  static const Inputs in = [] {
    Inputs i;
    i.dir = fs::temp_directory_path() / ("collbench-bench-report-" + std::to_string(::getpid()));
    fs::create_directories(i.dir);
    for (int n : {256, 512, 1024}) i.paths.push_back(write_results(i.dir, n));
    return i;
  }();
  return in;
}

void report_peak_rss(benchmark::State& state) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

// Reading the 1,024-rank file alone (240 cases, each with 3 x 1,024 per-rank values and 1,000
// samples).
void BM_ReadResults1024(benchmark::State& state) {
  const auto& in = inputs();
  state.counters["file_MiB"] = static_cast<double>(fs::file_size(in.paths.back())) / (1024.0 * 1024.0);
  for (auto _ : state) {
    auto f = record::load_input(in.paths.back());
    benchmark::DoNotOptimize(f.cases.data());
  }
  report_peak_rss(state);
}

// Everything `collbench report weak-scaling` does except plotting: read the three files, group,
// bootstrap E(N) and % of bound, project to 2,048 ranks, write JSON and Markdown.
void BM_WeakScalingReport(benchmark::State& state) {
  const auto& in = inputs();
  scaling::WeakScalingOptions opt;
  opt.requested_ranks = {256, 512, 1024, 2048};
  opt.system = model::load_system_profile("gb300-nvl72");
  std::size_t groups = 0;
  for (auto _ : state) {
    std::vector<record::InputFile> files;
    for (const auto& p : in.paths) files.push_back(record::load_input(p));
    const auto rep = scaling::build_weak_scaling(files, opt);
    const std::string json = report::weak_scaling_json(rep).dump(2);
    const std::string md = report::render_weak_scaling_markdown(rep, report::PlotLinks{});
    benchmark::DoNotOptimize(json.data());
    benchmark::DoNotOptimize(md.data());
    groups = rep.groups.size();
  }
  state.counters["groups"] = static_cast<double>(groups);
  report_peak_rss(state);
}

}  // namespace

BENCHMARK(BM_ReadResults1024)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WeakScalingReport)->Iterations(3)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
