// System profile loading: strict YAML validation (unknown keys with suggestions, types,
// required keys, unit typos), search paths and the digest recorded in run headers.
#include "collbench/model/system_profile.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "collbench/core/build_info.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/core/units.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::model {
namespace fs = std::filesystem;

namespace {

// The shared strict reader (yamlio/reader.hpp) plus the units of a system profile.
class ProfileReader : public yamlio::Reader {
 public:
  using yamlio::Reader::Reader;

  // A link rate in bytes/s per direction. `require_direction`: the text must say whether it is
  // bidirectional (NVLink is quoted both ways by vendors, so guessing would be a 2x error).
  [[nodiscard]] double rate(const YAML::Node& node, const std::string& key, bool require_direction) const {
    const std::string s = scalar(node, key, "a rate such as 900GB/s per-direction");
    Rate r;
    try {
      r = parse_rate(s);
    } catch (const InputError& e) {
      fail(node.Mark(), key, e.what());
    }
    if (require_direction && r.direction == Direction::unspecified) {
      fail(node.Mark(), key,
           fmt::format("'{}' names no direction; write e.g. '1.8TB/s bidirectional' or '900GB/s per-direction'", s));
    }
    if (r.bytes_per_s <= 0.0) fail(node.Mark(), key, fmt::format("must be positive, got '{}'", s));
    return per_direction_bytes_per_s(r, Direction::per_direction);
  }

  [[nodiscard]] double duration(const YAML::Node& node, const std::string& key) const {
    const std::string s = scalar(node, key, "a duration such as 2.7us");
    try {
      return parse_duration_s(s);
    } catch (const InputError& e) {
      fail(node.Mark(), key, e.what());
    }
  }
};

const std::vector<std::string> kProfileTopKeys{"name",      "description", "kind",           "scale_up",   "scale_out",
                                               "in_switch", "memory",      "launch_latency", "efficiency", "calibrated",
                                               "sources",   "compute",     "ep_kernel"};
const std::vector<std::string> kScaleUpKeys{"domain_size", "bandwidth", "hop_latency"};
const std::vector<std::string> kScaleOutKeys{"nics_per_gpu",     "nic_bandwidth",       "hop_latency", "fabric",
                                             "oversubscription", "leaf_domains",        "routing",     "ecmp_uplinks",
                                             "ecmp_flows",       "in_network_reduction"};
const std::vector<std::string> kRoutings{"adaptive", "ecmp"};
constexpr int kMaxEcmp = 1024;  // fabric.hpp: the exact balls-into-bins sum stays cheap
const std::vector<std::string> kInNetworkKeys{"supported", "dtypes", "latency"};
const std::vector<std::string> kInSwitchKeys{"supported", "dtypes", "latency", "tree_hop_latency", "reduction_cap"};
const std::vector<std::string> kCapKeys{"busbw", "ranks"};
const std::vector<std::string> kMemoryKeys{"copy_bandwidth"};
const std::vector<std::string> kEfficiencyKeys{"scale_up", "scale_out"};
const std::vector<std::string> kEpKernelKeys{"sms", "per_sm_bandwidth", "per_peer_cost"};
const std::vector<std::string> kComputeKeys{"peak_dense_bf16_tflops", "peak_dense_fp8_tflops", "gemm_efficiency",
                                            "attention_efficiency", "attention_backward_efficiency"};
const std::vector<std::string> kCalibratedKeys{"date", "host", "ranks", "repetitions", "margin"};
const std::vector<std::string> kKinds{"gpu", "cpu"};
const std::vector<std::string> kFabrics{"rail-optimized", "fat-tree", "dragonfly", "torus", "shared-memory", "none"};

ScaleUp read_scale_up(const ProfileReader& r, const YAML::Node& node, bool is_cpu) {
  r.check_map(node, "scale_up", kScaleUpKeys);
  ScaleUp s;
  // On CPU the domain is simulated (--ranks-per-domain / --domain-sizes / host split), so a
  // profile need not fix it; a GPU system's NVLink domain is a physical fact and is required.
  const YAML::Node size =
      is_cpu ? r.optional(node, "scale_up", "domain_size") : r.required(node, "scale_up", "domain_size");
  if (size.IsDefined()) s.domain_size = r.integer(size, "scale_up.domain_size", 1);
  s.bytes_per_s = r.rate(r.required(node, "scale_up", "bandwidth"), "scale_up.bandwidth", true);
  s.hop_latency_s = r.duration(r.required(node, "scale_up", "hop_latency"), "scale_up.hop_latency");
  return s;
}

std::vector<Dtype> read_dtypes(const ProfileReader& r, const YAML::Node& list, const std::string& key) {
  std::vector<Dtype> out;
  const auto names = r.text_list(list, key);
  for (std::size_t i = 0; i < names.size(); ++i) {
    try {
      out.push_back(parse_dtype(names[i]));
    } catch (const InputError& e) {
      r.fail(list[i].Mark(), fmt::format("{}[{}]", key, i), e.what());
    }
  }
  return out;
}

InNetworkReduction read_in_network(const ProfileReader& r, const YAML::Node& node) {
  const std::string at = "scale_out.in_network_reduction";
  r.check_map(node, at, kInNetworkKeys);
  InNetworkReduction s;
  s.supported = r.boolean(r.required(node, at, "supported"), at + ".supported");
  if (!s.supported) return s;
  s.dtypes = read_dtypes(r, r.required(node, at, "dtypes"), at + ".dtypes");
  s.latency_s = r.duration(r.required(node, at, "latency"), at + ".latency");
  return s;
}

// The optional topology keys of the fabric terms (leaf span, routing, ECMP uplinks and flows).
// ecmp_uplinks is required with routing ecmp, and the ECMP keys mean nothing without it.
void read_fabric_topology(const ProfileReader& r, const YAML::Node& node, ScaleOut& s) {
  if (const YAML::Node l = r.optional(node, "scale_out", "leaf_domains"); l.IsDefined()) {
    s.leaf_domains = r.integer(l, "scale_out.leaf_domains", 1);
  }
  if (const YAML::Node m = r.optional(node, "scale_out", "routing"); m.IsDefined()) {
    s.routing = r.one_of(m, "scale_out.routing", kRoutings) == "ecmp" ? Routing::ecmp : Routing::adaptive;
  }
  const YAML::Node up = r.optional(node, "scale_out", "ecmp_uplinks");
  const YAML::Node flows = r.optional(node, "scale_out", "ecmp_flows");
  if (s.routing != Routing::ecmp) {
    for (const auto& [key, n] : {std::pair{"ecmp_uplinks", up}, std::pair{"ecmp_flows", flows}}) {
      if (n.IsDefined()) r.fail(n.Mark(), std::string("scale_out.") + key, "applies only with scale_out.routing: ecmp");
    }
    return;
  }
  s.ecmp_uplinks = r.integer(r.required(node, "scale_out", "ecmp_uplinks"), "scale_out.ecmp_uplinks", 1, kMaxEcmp);
  if (flows.IsDefined()) s.ecmp_flows = r.integer(flows, "scale_out.ecmp_flows", 1, kMaxEcmp);
}

ScaleOut read_scale_out(const ProfileReader& r, const YAML::Node& node) {
  r.check_map(node, "scale_out", kScaleOutKeys);
  ScaleOut s;
  s.nics_per_gpu = r.integer(r.required(node, "scale_out", "nics_per_gpu"), "scale_out.nics_per_gpu", 1);
  // NIC line rates (800Gb/s) are per direction by convention; an explicit word still wins.
  s.nic_bytes_per_s = r.rate(r.required(node, "scale_out", "nic_bandwidth"), "scale_out.nic_bandwidth", false);
  s.hop_latency_s = r.duration(r.required(node, "scale_out", "hop_latency"), "scale_out.hop_latency");
  s.fabric = r.one_of(r.required(node, "scale_out", "fabric"), "scale_out.fabric", kFabrics);
  if (const YAML::Node o = r.optional(node, "scale_out", "oversubscription"); o.IsDefined()) {
    s.oversubscription = r.number(o, "scale_out.oversubscription", 1.0, 1e6);
  }
  read_fabric_topology(r, node, s);
  if (const YAML::Node n = r.optional(node, "scale_out", "in_network_reduction"); n.IsDefined()) {
    s.in_network = read_in_network(r, n);
  }
  return s;
}

InSwitch read_in_switch(const ProfileReader& r, const YAML::Node& node) {
  r.check_map(node, "in_switch", kInSwitchKeys);
  InSwitch s;
  s.supported = r.boolean(r.required(node, "in_switch", "supported"), "in_switch.supported");
  if (!s.supported) return s;
  const YAML::Node dtypes = r.required(node, "in_switch", "dtypes");
  const auto names = r.text_list(dtypes, "in_switch.dtypes");
  for (std::size_t i = 0; i < names.size(); ++i) {
    try {
      s.dtypes.push_back(parse_dtype(names[i]));
    } catch (const InputError& e) {
      r.fail(dtypes[i].Mark(), fmt::format("in_switch.dtypes[{}]", i), e.what());
    }
  }
  s.latency_s = r.duration(r.required(node, "in_switch", "latency"), "in_switch.latency");
  s.tree_hop_latency_s = r.duration(r.required(node, "in_switch", "tree_hop_latency"), "in_switch.tree_hop_latency");
  if (const YAML::Node cap = r.optional(node, "in_switch", "reduction_cap"); cap.IsDefined()) {
    r.check_map(cap, "in_switch.reduction_cap", kCapKeys);
    ReductionCap c;
    c.busbw_bytes_per_s =
        r.rate(r.required(cap, "in_switch.reduction_cap", "busbw"), "in_switch.reduction_cap.busbw", false);
    c.num_ranks = r.integer(r.required(cap, "in_switch.reduction_cap", "ranks"), "in_switch.reduction_cap.ranks", 2);
    s.reduction_cap = c;
  }
  return s;
}

Efficiency read_efficiency(const ProfileReader& r, const YAML::Node& node) {
  r.check_map(node, "efficiency", kEfficiencyKeys);
  Efficiency e;
  // (0, 1]: expected = bound x efficiency can then never beat the bound.
  e.scale_up = r.number(r.required(node, "efficiency", "scale_up"), "efficiency.scale_up", 1e-6, 1.0);
  e.scale_out = r.number(r.required(node, "efficiency", "scale_out"), "efficiency.scale_out", 1e-6, 1.0);
  return e;
}

Compute read_compute(const ProfileReader& r, const YAML::Node& node) {
  r.check_map(node, "compute", kComputeKeys);
  Compute c;
  constexpr double kTera = 1e12;
  c.peak_bf16_flops =
      r.positive(r.required(node, "compute", "peak_dense_bf16_tflops"), "compute.peak_dense_bf16_tflops", 1e9) * kTera;
  c.peak_fp8_flops =
      r.positive(r.required(node, "compute", "peak_dense_fp8_tflops"), "compute.peak_dense_fp8_tflops", 1e9) * kTera;
  c.gemm_efficiency = r.number(r.required(node, "compute", "gemm_efficiency"), "compute.gemm_efficiency", 1e-6, 1.0);
  c.attention_efficiency =
      r.number(r.required(node, "compute", "attention_efficiency"), "compute.attention_efficiency", 1e-6, 1.0);
  if (const YAML::Node bwd = r.optional(node, "compute", "attention_backward_efficiency"); bwd.IsDefined()) {
    c.attention_backward_efficiency = r.number(bwd, "compute.attention_backward_efficiency", 1e-6, 1.0);
  }
  return c;
}

// ep_kernel: sms and per_sm_bandwidth come together (the SM cap), per_peer_cost on its own.
EpKernel read_ep_kernel(const ProfileReader& r, const YAML::Node& node) {
  r.check_map(node, "ep_kernel", kEpKernelKeys);
  EpKernel k;
  const YAML::Node sms = r.optional(node, "ep_kernel", "sms");
  const YAML::Node rate = r.optional(node, "ep_kernel", "per_sm_bandwidth");
  if (sms.IsDefined() != rate.IsDefined()) {
    const bool has_sms = sms.IsDefined();
    r.fail((has_sms ? sms : rate).Mark(), has_sms ? "ep_kernel.sms" : "ep_kernel.per_sm_bandwidth",
           fmt::format("needs ep_kernel.{} too (the SM cap is sms x per_sm_bandwidth)",
                       has_sms ? "per_sm_bandwidth" : "sms"));
  }
  if (sms.IsDefined()) {
    k.sms = r.integer(sms, "ep_kernel.sms", 1, 4096);
    k.per_sm_bytes_per_s = r.rate(rate, "ep_kernel.per_sm_bandwidth", false);
  }
  if (const YAML::Node c = r.optional(node, "ep_kernel", "per_peer_cost"); c.IsDefined()) {
    k.per_peer_s = r.duration(c, "ep_kernel.per_peer_cost");
    if (!(k.per_peer_s >= 0.0)) r.fail(c.Mark(), "ep_kernel.per_peer_cost", "must not be negative");
  }
  if (k.sms == 0 && k.per_peer_s == 0.0) {
    r.fail(node.Mark(), "ep_kernel", "sets nothing; accepted: sms with per_sm_bandwidth, per_peer_cost");
  }
  return k;
}

Calibration read_calibrated(const ProfileReader& r, const YAML::Node& node) {
  r.check_map(node, "calibrated", kCalibratedKeys);
  Calibration c;
  c.date = r.text(r.required(node, "calibrated", "date"), "calibrated.date");
  c.host = r.text(r.required(node, "calibrated", "host"), "calibrated.host");
  c.num_ranks = r.integer(r.required(node, "calibrated", "ranks"), "calibrated.ranks", 2);
  c.repetitions = r.integer(r.required(node, "calibrated", "repetitions"), "calibrated.repetitions", 1);
  c.margin = r.number(r.required(node, "calibrated", "margin"), "calibrated.margin", 0.0, 10.0);
  return c;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read system profile '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> candidate_dirs() {
  return profile_search_dirs();
}

bool looks_like_path(const std::string& s) {
  const auto ends_with = [&](std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return s.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

}  // namespace

bool InSwitch::reduces(Dtype dtype) const {
  return supported && std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

bool InNetworkReduction::reduces(Dtype dtype) const {
  return supported && std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

std::string fnv1a64_hex(std::string_view bytes) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;  // FNV 64 prime
  }
  return fmt::format("{:016x}", hash);
}

SystemProfile parse_system_profile(std::string_view yaml_text, const std::string& origin) {
  const ProfileReader r(origin);
  const YAML::Node root = yamlio::load_document(r, yaml_text, "system profile");
  r.check_map(root, "", kProfileTopKeys);

  SystemProfile p;
  p.name = r.text(r.required(root, "", "name"), "name");
  if (const YAML::Node d = r.optional(root, "", "description"); d.IsDefined()) p.description = r.text(d, "description");
  p.kind = r.one_of(r.required(root, "", "kind"), "kind", kKinds);
  p.scale_up = read_scale_up(r, r.required(root, "", "scale_up"), p.is_cpu());
  p.scale_out = read_scale_out(r, r.required(root, "", "scale_out"));
  if (const YAML::Node s = r.optional(root, "", "in_switch"); s.IsDefined()) p.in_switch = read_in_switch(r, s);
  if (const YAML::Node m = r.optional(root, "", "memory"); m.IsDefined()) {
    r.check_map(m, "memory", kMemoryKeys);
    p.memory_copy_bytes_per_s = r.rate(r.required(m, "memory", "copy_bandwidth"), "memory.copy_bandwidth", false);
  }
  if (const YAML::Node l = r.optional(root, "", "launch_latency"); l.IsDefined()) {
    p.launch_latency_s = r.duration(l, "launch_latency");
  }
  p.efficiency = read_efficiency(r, r.required(root, "", "efficiency"));
  if (const YAML::Node c = r.optional(root, "", "calibrated"); c.IsDefined()) p.calibrated = read_calibrated(r, c);
  if (const YAML::Node k = r.optional(root, "", "ep_kernel"); k.IsDefined()) p.ep_kernel = read_ep_kernel(r, k);
  if (const YAML::Node c = r.optional(root, "", "compute"); c.IsDefined()) p.compute = read_compute(r, c);
  p.sources = r.text_list(r.required(root, "", "sources"), "sources");
  p.digest = fnv1a64_hex(yaml_text);
  return p;
}

std::vector<std::string> system_profile_search_dirs() {
  std::vector<std::string> out;
  for (const auto& d : candidate_dirs()) {
    std::error_code ec;
    if (fs::is_directory(fs::path(d) / "systems", ec)) out.push_back(d);
  }
  return out;
}

std::string cpu_local_profile_path() {
  // XDG base directory spec: a relative XDG_CONFIG_HOME is invalid and must be ignored.
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/collbench/cpu-local.yaml";
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    throw InputError("cannot locate the user config folder for cpu-local: set XDG_CONFIG_HOME or HOME");
  }
  return std::string(home) + "/.config/collbench/cpu-local.yaml";
}

std::vector<std::string> list_system_profiles() {
  std::set<std::string> names;
  for (const auto& dir : system_profile_search_dirs()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(dir) / "systems", ec)) {
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  try {
    std::error_code ec;
    if (fs::exists(cpu_local_profile_path(), ec)) names.insert("cpu-local");
  } catch (const InputError&) {
    // No config folder: cpu-local is simply not available.
  }
  return {names.begin(), names.end()};
}

SystemProfile load_system_profile(const std::string& name_or_path) {
  std::string path;
  if (looks_like_path(name_or_path)) {
    path = name_or_path;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      throw InputError(
          fmt::format("system profile file '{}' is a directory; give a YAML file (profiles/systems/*.yaml)", path));
    }
    if (!fs::is_regular_file(path, ec)) throw InputError(fmt::format("system profile file '{}' not found", path));
  } else if (name_or_path == "cpu-local") {
    path = cpu_local_profile_path();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      throw InputError(
          fmt::format("system profile 'cpu-local' is not calibrated yet ({} does not exist); run "
                      "'mpiexec -n 2 collbench calibrate' on this host first",
                      path));
    }
  } else {
    std::vector<std::string> searched;
    for (const auto& dir : candidate_dirs()) {
      const std::string candidate = dir + "/systems/" + name_or_path + ".yaml";
      searched.push_back(dir + "/systems");
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      throw InputError(unknown_name_message("system profile", name_or_path, list_system_profiles()) + "; searched " +
                       join(searched) + " (set COLLBENCH_PROFILE_PATH, or pass a file path)");
    }
  }
  SystemProfile p = parse_system_profile(read_file(path), path);
  p.path = path;
  return p;
}

}  // namespace collbench::model
