// Compute load table, parsing and sizing (spec.hpp).
#include "collbench/overlap/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/units.hpp"
#include "collbench/workload/profile.hpp"

namespace collbench::overlap {
namespace {

constexpr std::int64_t kMaxDim = 1 << 20;

std::int64_t parse_positive(const std::string& flag_key, const std::string& value, std::int64_t max_value) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || v < 1 || v > max_value) {
    throw InputError(fmt::format("--overlap: {}={} is not a whole number in 1..{}", flag_key, value, max_value));
  }
  return v;
}

}  // namespace

const std::vector<LoadInfo>& compute_loads() {
  static const std::vector<LoadInfo> kLoads{
      {"gemm",
       "dense matrix product C[m x n] = A[m x k] B[k x n] (CPU: fp32 on worker threads; GPU: cuBLAS bf16 on a "
       "second stream), sized by m,n,k or by a workload's expert FFN",
       {"m", "n", "k", "workload", "tokens_per_expert", "tokens", "repeat", "threads"}},
      {"stream",
       "memory-bound streaming copy of `bytes` (CPU: memcpy on worker threads; GPU: a copy kernel on a second "
       "stream)",
       {"bytes", "repeat", "threads"}},
      {"sleep",
       "waits `time` without using a core (CPU: worker threads sleep; GPU: one thread block spins on the clock)",
       {"time", "threads"}},
  };
  return kLoads;
}

std::vector<std::string> compute_load_names() {
  std::vector<std::string> names;
  for (const auto& l : compute_loads()) names.push_back(l.name);
  return names;
}

std::int64_t tokens_per_expert(std::int64_t tokens_per_rank, int ep_size, int top_k, int num_experts) {
  if (tokens_per_rank < 1 || ep_size < 1 || top_k < 1 || num_experts < 1) {
    throw InputError("tokens per expert needs positive tokens, EP size, top-k and expert count");
  }
  const std::int64_t rows = tokens_per_rank * ep_size * top_k;
  return (rows + num_experts - 1) / num_experts;
}

namespace {

// The key=value items after "LOAD:" into s.params (each key one of the load's, at most once).
void parse_params(ComputeSpec& s, std::string_view rest, const LoadInfo& info) {
  for (const auto& item : split_list(std::string(rest), "--overlap")) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError(
          fmt::format("--overlap {}: '{}' is not key=value (keys of {}: {})", s.text, item, s.load, join(info.keys)));
    }
    const std::string key = item.substr(0, eq);
    if (std::find(info.keys.begin(), info.keys.end(), key) == info.keys.end()) {
      throw InputError(fmt::format("--overlap {}: {}", s.text, unknown_name_message(s.load + " key", key, info.keys)));
    }
    if (s.params.count(key) != 0) throw InputError(fmt::format("--overlap {}: key '{}' given twice", s.text, key));
    s.params[key] = item.substr(eq + 1);
  }
}

// The value of a key, or null when it was not given.
const std::string* param(const ComputeSpec& s, const char* key) {
  const auto it = s.params.find(key);
  return it == s.params.end() ? nullptr : &it->second;
}

// gemm sized by a workload's expert FFN: k = hidden size, n = the expert's intermediate size,
// m = tokens_per_expert, or the tokens per expert of `tokens` (else the profile's) on num_ranks.
void size_gemm_from_workload(ComputeSpec& s, const std::string& name, int num_ranks) {
  const auto profile = workload::load_workload_profile(name);
  s.workload = profile.name;
  if (profile.expert_intermediate_size <= 0) {
    throw InputError(
        fmt::format("--overlap {}: workload '{}' ({}) gives no model.expert_intermediate_size, so "
                    "it cannot size an expert GEMM; add it, or give m,n,k",
                    s.text, profile.name, profile.source));
  }
  s.gemm.k = profile.hidden_size;
  s.gemm.n = profile.expert_intermediate_size;
  if (param(s, "tokens_per_expert") && param(s, "tokens")) {
    throw InputError(fmt::format("--overlap {}: tokens_per_expert and tokens exclude each other", s.text));
  }
  if (const auto* per_expert = param(s, "tokens_per_expert")) {
    s.gemm.m = parse_positive("tokens_per_expert", *per_expert, kMaxDim);
  } else {
    const auto* given = param(s, "tokens");
    const std::int64_t tokens = given ? parse_positive("tokens", *given, kMaxDim) : profile.tokens_per_rank;
    s.gemm.m = tokens_per_expert(tokens, std::max(num_ranks, 1), profile.top_k, profile.num_routed_experts);
  }
}

void size_gemm(ComputeSpec& s, int num_ranks) {
  if (const auto* w = param(s, "workload")) {
    size_gemm_from_workload(s, *w, num_ranks);
  } else if (param(s, "tokens_per_expert") || param(s, "tokens")) {
    throw InputError(fmt::format("--overlap {}: tokens_per_expert and tokens need workload=NAME (accepted: {})", s.text,
                                 join(workload::list_workload_profiles())));
  }
  if (const auto* v = param(s, "m")) s.gemm.m = parse_positive("m", *v, kMaxDim);
  if (const auto* v = param(s, "n")) s.gemm.n = parse_positive("n", *v, kMaxDim);
  if (const auto* v = param(s, "k")) s.gemm.k = parse_positive("k", *v, kMaxDim);
  // Dimensions derived from a workload are held to the same limit as given ones (k <= 2^20 keeps
  // the GEMM's all-ones check exact; m, n bound the memory).
  for (const auto& [name, value] : {std::pair{"m", s.gemm.m}, std::pair{"n", s.gemm.n}, std::pair{"k", s.gemm.k}}) {
    if (value > kMaxDim) {
      throw InputError(
          fmt::format("--overlap {}: the GEMM's {} = {} (from workload '{}') exceeds {}; give "
                      "tokens_per_expert=, tokens= or {}= explicitly",
                      s.text, name, value, s.workload, kMaxDim, name));
    }
  }
}

void size_stream(ComputeSpec& s, int /*num_ranks*/) {
  const auto* v = param(s, "bytes");
  if (v == nullptr) return;
  try {
    s.bytes = parse_bytes(*v);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--overlap {}: bytes={}: {}", s.text, *v, e.what()));
  }
  if (s.bytes < 64) throw InputError(fmt::format("--overlap {}: bytes={} is below the minimum of 64", s.text, *v));
}

void size_sleep(ComputeSpec& s, int /*num_ranks*/) {
  const auto* v = param(s, "time");
  if (v == nullptr) return;
  double seconds = 0.0;
  try {
    seconds = parse_duration_s(*v);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--overlap {}: time={}: {}", s.text, *v, e.what()));
  }
  // Each phase of an overlap iteration runs under the watchdog's --timeout (default 300 s).
  if (!(seconds > 0.0) || seconds > 60.0) {
    throw InputError(fmt::format("--overlap {}: time={} must be in (0, 60s], e.g. time=20ms", s.text, *v));
  }
  s.sleep_us = seconds * 1e6;
}

// How each load (compute_loads()) sizes itself from its parameters.
void size_load(ComputeSpec& s, int num_ranks) {
  using Sizer = void (*)(ComputeSpec&, int);
  static const std::pair<std::string_view, Sizer> kSizers[] = {
      {"gemm", size_gemm}, {"stream", size_stream}, {"sleep", size_sleep}};
  for (const auto& [name, sizer] : kSizers) {
    if (name == s.load) sizer(s, num_ranks);
  }
}

}  // namespace

ComputeSpec parse_compute_spec(std::string_view text, int num_ranks) {
  ComputeSpec s;
  s.text = std::string(text);
  const auto colon = text.find(':');
  s.load = std::string(text.substr(0, colon));
  const auto& loads = compute_loads();
  const auto info = std::find_if(loads.begin(), loads.end(), [&](const LoadInfo& l) { return l.name == s.load; });
  if (info == loads.end()) {
    throw InputError("--overlap: " + unknown_name_message("compute load", s.load, compute_load_names()) +
                     " (e.g. --overlap gemm:m=512,n=512,k=512 or --overlap sleep:time=20ms)");
  }
  if (colon != std::string_view::npos) parse_params(s, text.substr(colon + 1), *info);
  if (const auto* v = param(s, "threads")) s.threads = static_cast<int>(parse_positive("threads", *v, 1024));
  if (const auto* v = param(s, "repeat")) s.repeat = static_cast<int>(parse_positive("repeat", *v, 1 << 20));
  size_load(s, num_ranks);
  return s;
}

ComputeSpec chunk_spec(const ComputeSpec& spec, int chunks) {
  if (chunks < 1) throw InputError(fmt::format("--overlap-chunks {}: must be at least 1", chunks));
  ComputeSpec c = spec;
  const auto up = [chunks](std::int64_t v) { return std::max<std::int64_t>(1, (v + chunks - 1) / chunks); };
  c.gemm.m = up(spec.gemm.m);
  c.bytes = std::max<std::uint64_t>(
      64, (spec.bytes + static_cast<std::uint64_t>(chunks) - 1) / static_cast<std::uint64_t>(chunks));
  c.sleep_us = spec.sleep_us / chunks;
  return c;
}

std::string describe(const ComputeSpec& spec, std::string_view device) {
  const bool gpu = device == "gpu";
  const std::string threads =
      gpu ? std::string() : fmt::format(", {} thread{}", spec.threads, spec.threads == 1 ? "" : "s");
  if (spec.load == "gemm") {
    return fmt::format("gemm {}x{}x{} {} ({:.3g} GFLOP){} x{}{}", spec.gemm.m, spec.gemm.n, spec.gemm.k,
                       gpu ? "bf16" : "fp32", spec.gemm.flops() / 1e9,
                       spec.workload.empty() ? "" : " " + spec.workload + " expert FFN", spec.repeat, threads);
  }
  if (spec.load == "stream") return fmt::format("stream copy {} x{}{}", format_bytes(spec.bytes), spec.repeat, threads);
  return fmt::format("sleep {:.0f} us{}", spec.sleep_us, threads);
}

}  // namespace collbench::overlap
