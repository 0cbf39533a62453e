// nccl-tests -J JSON output (file versions 1 to 3): read into the same NcclTestsLog as a console
// log, with the same rank-count, busbw and collective checks.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_detail.hpp"
#include "collbench/record/nccltests_import.hpp"

namespace collbench::record {
namespace {

using namespace nccltests_detail;
using Json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// -J JSON (nccl-tests src/util.cu; JSON file versions 1 to 3)

constexpr double kJsonTolerance = 5e-7;  // doubles are printed with "%lf": 6 decimals

class JsonReader {
 public:
  JsonReader(const std::string& path, NcclTestsLog& log) : path_(path), log_(log) {}

  [[noreturn]] void bad(const std::string& where, const std::string& what) const {
    throw InputError(path_ + ": " + where + ": " + what);
  }

  // Numbers; "nan" strings (what nccl-tests writes for NaN) and null give nullopt.
  std::optional<double> number(const Json& obj, const std::string& key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) {
      const auto v = to_double(it->get<std::string>());
      if (v && !std::isfinite(*v)) {
        log_.warnings.push_back(where + "." + key + " is " + in_quotes(it->get<std::string>()) + "; left empty");
        return std::nullopt;
      }
    }
    bad(where + "." + key, "expected a number, got " + it->dump());
  }

  std::optional<std::uint64_t> unsigned_number(const Json& obj, const std::string& key, const std::string& where) {
    const auto v = number(obj, key, where);
    if (!v) return std::nullopt;
    if (*v < 0 || *v != std::floor(*v) || *v > 1.8e19)
      bad(where + "." + key, "expected a whole non-negative number, got " + obj.at(key).dump());
    return static_cast<std::uint64_t>(*v);
  }

  std::string str(const Json& obj, const std::string& key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    bad(where + "." + key, "expected a string, got " + it->dump());
  }

  NcclTestsHalf half(const Json& obj, const std::string& where) {
    NcclTestsHalf h;
    if (obj.is_null()) return h;
    if (!obj.is_object()) bad(where, "expected an object or null, got " + obj.dump());
    if (obj.contains("cpu_time")) {
      log_.cpu_time = true;
      h.time_us = number(obj, "cpu_time", where);
    } else {
      h.time_us = number(obj, "time", where);
    }
    h.algbw_gbps = number(obj, "alg_bw", where);
    h.busbw_gbps = number(obj, "bus_bw", where);
    h.wrong = unsigned_number(obj, "nwrong", where);
    h.time_tolerance_us = h.algbw_tolerance_gbps = h.busbw_tolerance_gbps = kJsonTolerance;
    return h;
  }

  NcclTestsPerIteration per_iteration(const Json& obj, const std::string& where) {
    if (!obj.is_object()) bad(where, "expected an object, got " + obj.dump());
    NcclTestsPerIteration p;
    p.min_us = number(obj, "min_us", where);
    p.max_us = number(obj, "max_us", where);
    p.avg_us = number(obj, "avg_us", where);
    p.p50_us = number(obj, "p50_us", where);
    p.p95_us = number(obj, "p95_us", where);
    p.p99_us = number(obj, "p99_us", where);
    p.stdev_us = number(obj, "stdev_us", where);
    p.cv_pct = number(obj, "cv_pct", where);
    auto list = [&](const Json& a, const std::string& w) {
      if (!a.is_array()) bad(w, "expected a list of numbers, got " + a.dump());
      std::vector<double> out;
      for (const auto& x : a) {
        if (!x.is_number()) bad(w, "expected a list of numbers, got " + x.dump());
        out.push_back(x.get<double>());
      }
      return out;
    };
    if (obj.contains("times_us")) p.times_us = list(obj.at("times_us"), where + ".times_us");
    if (obj.contains("per_process_max_times_us")) {
      const auto& a = obj.at("per_process_max_times_us");
      if (!a.is_array()) bad(where + ".per_process_max_times_us", "expected a list of lists");
      for (std::size_t i = 0; i < a.size(); ++i)
        p.per_process_max_times_us.push_back(
            list(a[i], where + ".per_process_max_times_us[" + std::to_string(i) + "]"));
    }
    return p;
  }

 private:
  std::string path_;
  NcclTestsLog& log_;
};

// 1-based line and column of a byte offset into the text.
std::pair<int, int> line_and_column(std::string_view text, std::size_t byte) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// The parsed JSON text; InputError naming the line and column of a syntax error.
Json parse_json_text(std::string_view text, const std::string& source_path) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    const auto [line, column] = line_and_column(text, byte);
    const bool at_end = std::string_view(e.what()).find("end of input") != std::string_view::npos;
    throw InputError(source_path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                     (at_end ? "the JSON ends early (was the nccl-tests run killed before it closed the file?): "
                             : "not valid JSON: ") +
                     e.what());
  } catch (const Json::out_of_range& e) {
    throw InputError(source_path + ": not valid JSON: a number out of range (" + e.what() + ")");
  }
}

// The JSON file version ("version"), with a warning when it is missing or newer than 3.
void read_version(const Json& j, const JsonReader& r, NcclTestsLog& log) {
  if (!j.contains("version")) {
    log.warnings.push_back("no 'version' key: not sure this is an nccl-tests -J file");
    return;
  }
  if (!j.at("version").is_number_integer()) r.bad("version", "expected an integer, got " + j.at("version").dump());
  log.json_version = j.at("version").get<int>();
  if (*log.json_version > 3)
    log.warnings.push_back("JSON file version " + std::to_string(*log.json_version) +
                           " is newer than the versions known (1-3); reading the fields those define");
}

// The program (args[0] without its directory) and the collective its name gives.
void read_program(const Json& j, NcclTestsLog& log) {
  if (!(j.contains("args") && j.at("args").is_array() && !j.at("args").empty() && j.at("args")[0].is_string())) return;
  std::string program = j.at("args")[0].get<std::string>();
  const std::size_t slash = program.find_last_of("/\\");
  log.program = slash == std::string::npos ? program : program.substr(slash + 1);
  log.collective = nccl_tests_collective_name(log.program);
  if (!log.collective.empty()) log.collective_source = "program name (args[0])";
}

// The NCCL version, and the environment variables of NCCL, CUDA, UCX and the MPI libraries.
void read_versions_and_env(const Json& j, NcclTestsLog& log) {
  if (j.contains("nccl_version") && j.at("nccl_version").is_number_integer())
    log.nccl_version = nccl_version_string(j.at("nccl_version").get<long>());
  if (!(j.contains("env") && j.at("env").is_array())) return;
  for (const auto& e : j.at("env")) {
    if (!e.is_string()) continue;
    const std::string kv = e.get<std::string>();
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = kv.substr(0, eq);
    for (std::string_view prefix : {"NCCL_", "CUDA_", "UCX_", "OMPI_", "MPICH_"})
      if (key.rfind(prefix, 0) == 0) log.env[key] = kv.substr(eq + 1);
  }
}

// Run parameters (config), under the console log's names; returns config.devices, or nullptr.
const Json* read_config(const Json& j, JsonReader& r, NcclTestsLog& log) {
  if (!j.contains("config")) return nullptr;
  const auto& c = j.at("config");
  if (!c.is_object()) r.bad("config", "expected an object, got " + c.dump());
  const std::pair<const char*, const char*> names[] = {{"nthreads", "nThread"},
                                                       {"ngpus", "nGpus"},
                                                       {"minimum_bytes", "minBytes"},
                                                       {"maximum_bytes", "maxBytes"},
                                                       {"warmup_iters", "warmup iters"},
                                                       {"iterations", "iters"},
                                                       {"aggregated_iterations", "agg iters"},
                                                       {"validation", "validation"},
                                                       {"graph", "graph"},
                                                       {"blocking_collectives", "blocking"},
                                                       {"per_iter_timing", "per_iter_timing"},
                                                       {"per_iter_skip", "per_iter_skip"},
                                                       {"parallel_init", "parallel_init"}};
  for (const auto& [json_key, name] : names)
    if (c.contains(json_key)) log.header[name] = r.str(c, json_key, "config");
  if (c.contains("step_factor")) log.header["step"] = r.str(c, "step_factor", "config") + "(factor)";
  if (c.contains("step_bytes")) log.header["step"] = r.str(c, "step_bytes", "config") + "(bytes)";
  return c.contains("devices") ? &c.at("devices") : nullptr;
}

// One entry of the device list.
NcclTestsDevice read_device(const Json& d, const std::string& where, JsonReader& r) {
  if (!d.is_object()) r.bad(where, "expected an object, got " + d.dump());
  NcclTestsDevice dev;
  dev.rank = static_cast<int>(r.number(d, "rank", where).value_or(0));
  if (const auto g = r.number(d, "group", where)) dev.group = static_cast<int>(*g);
  if (const auto p = r.number(d, "pid", where)) dev.pid = static_cast<long>(*p);
  dev.host = r.str(d, "hostname", where);
  if (const auto v = r.number(d, "device", where)) dev.device = static_cast<int>(*v);
  dev.bus_id = r.str(d, "device_hex", where);
  dev.name = r.str(d, "device_info", where);
  return dev;
}

// The device list (config.devices, else the top-level devices), when there is one.
void read_devices(const Json* devices, JsonReader& r, NcclTestsLog& log) {
  if (!devices) return;
  if (!devices->is_array()) r.bad("config.devices", "expected a list, got " + devices->dump());
  for (std::size_t i = 0; i < devices->size(); ++i)
    log.devices.push_back(read_device((*devices)[i], "config.devices[" + std::to_string(i) + "]", r));
}

// A row's in-place and out-of-place measurements and their per-iteration objects.
void read_row_halves(const Json& o, const std::string& where, JsonReader& r, NcclTestsRow& row) {
  if (o.contains("out_of_place")) row.out_of_place = r.half(o.at("out_of_place"), where + ".out_of_place");
  if (o.contains("in_place")) row.in_place = r.half(o.at("in_place"), where + ".in_place");
  if (o.contains("out_of_place_per_iter"))
    row.out_of_place.per_iteration = r.per_iteration(o.at("out_of_place_per_iter"), where + ".out_of_place_per_iter");
  if (o.contains("in_place_per_iter"))
    row.in_place.per_iteration = r.per_iteration(o.at("in_place_per_iter"), where + ".in_place_per_iter");
  if (!row.out_of_place.present() && !row.in_place.present())
    r.bad(where, "neither out_of_place nor in_place holds a measurement");
}

// One entry of results: a table row.
NcclTestsRow read_result(const Json& o, std::size_t i, JsonReader& r) {
  const std::string where = "results[" + std::to_string(i) + "]";
  if (!o.is_object()) r.bad(where, "expected an object, got " + o.dump());
  NcclTestsRow row;
  row.index = i;
  const auto size = r.unsigned_number(o, "size", where);
  if (!size) r.bad(where + ".size", "missing");
  row.size_bytes = *size;
  row.count = r.unsigned_number(o, "count", where).value_or(0);
  row.type = r.str(o, "type", where);
  row.redop = r.str(o, "redop", where);
  const std::string root = r.str(o, "root", where);
  if (!root.empty()) {
    const auto v = to_long(root);
    if (!v) r.bad(where + ".root", "expected an integer, got " + in_quotes(root));
    row.root = *v;
  }
  read_row_halves(o, where, r, row);
  return row;
}

// The results list: one row per entry; InputError when it is missing, not a list or empty.
void read_results(const Json& j, JsonReader& r, NcclTestsLog& log) {
  if (!j.contains("results"))
    r.bad("results",
          "missing: no results in this file (the run stopped before its first size, or this is not nccl-tests -J "
          "output)");
  const auto& results = j.at("results");
  if (!results.is_array()) r.bad("results", "expected a list, got " + results.dump());
  if (results.empty()) r.bad("results", "the list is empty: nothing was measured");
  for (std::size_t i = 0; i < results.size(); ++i) log.rows.push_back(read_result(results[i], i, r));
}

// Footer: out-of-bounds count, average bus bandwidth and the errors nccl-tests printed.
void read_footer(const Json& j, JsonReader& r, NcclTestsLog& log) {
  if (j.contains("out_of_bounds") && j.at("out_of_bounds").is_object()) {
    if (const auto v = r.number(j.at("out_of_bounds"), "count", "out_of_bounds"))
      log.out_of_bounds = static_cast<long>(*v);
  }
  // Version 1 spelled the average "average_bus_bandwidith" / "bandwidith".
  for (const char* key : {"average_bus_bandwidth", "average_bus_bandwidith"}) {
    if (!j.contains(key) || !j.at(key).is_object()) continue;
    const auto& a = j.at(key);
    log.avg_busbw = a.contains("bandwidth") ? r.number(a, "bandwidth", key) : r.number(a, "bandwidith", key);
  }
  if (!log.avg_busbw) log.warnings.push_back("no average_bus_bandwidth: the run may have stopped before its end");
  if (j.contains("errors") && j.at("errors").is_array())
    for (const auto& e : j.at("errors"))
      if (e.is_string() && !e.get<std::string>().empty()) log.errors.push_back(e.get<std::string>());
}

// Ranks per process: nThread x nGpus of the header, when both are positive integers.
std::optional<int> ranks_per_process(const NcclTestsLog& log) {
  const auto t = log.header.find("nThread"), g = log.header.find("nGpus");
  if (t == log.header.end() || g == log.header.end()) return std::nullopt;
  const auto tv = to_long(t->second), gv = to_long(g->second);
  if (tv && gv && *tv > 0 && *gv > 0) return static_cast<int>(*tv * *gv);
  return std::nullopt;
}

// What the device list says about the rank count (and whether it lists every rank).
RankEvidence json_rank_evidence(NcclTestsLog& log) {
  // nccl-tests parses only the first device line of each process into the JSON, so config.devices
  // has one entry per process, ranks 0, k, 2k, ... with k = nThread x nGpus.
  RankEvidence ev;
  const std::optional<int> pp = ranks_per_process(log);
  ev.per_process = pp;
  const int num_devices = static_cast<int>(log.devices.size());
  bool per_process_entries = num_devices > 0 && pp.has_value();
  bool every_rank = num_devices > 0;
  for (int i = 0; i < num_devices; ++i) {
    if (pp && log.devices[static_cast<std::size_t>(i)].rank != i * *pp) per_process_entries = false;
    if (log.devices[static_cast<std::size_t>(i)].rank != i) every_rank = false;
  }
  if (per_process_entries) {
    ev.listed = num_devices * *pp;
    ev.listed_source = *pp > 1 ? "JSON devices (one per process) x nThread x nGpus" : "JSON devices";
    log.devices_complete = *pp == 1;
  } else if (every_rank && !pp) {
    ev.listed = num_devices;
    ev.listed_source = "JSON devices";
    log.devices_complete = true;
  } else {
    ev.incomplete_reason = num_devices == 0 ? "the JSON has no config.devices"
                                            : "config.devices does not list ranks 0, k, 2k, ... (k = nThread x nGpus)";
    for (const auto& d : log.devices) ev.at_least = std::max(ev.at_least, d.rank + 1);
  }
  return ev;
}

}  // namespace

NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& source_path) {
  const Json j = parse_json_text(text, source_path);
  NcclTestsLog log;
  log.format = "json";
  log.source_path = source_path;
  JsonReader r(source_path, log);
  if (!j.is_object())
    r.bad("top level", "expected the JSON object nccl-tests -J writes, got " + std::string(j.type_name()));
  read_version(j, r, log);
  read_program(j, log);
  read_versions_and_env(j, log);
  const Json* devices = read_config(j, r, log);
  if (!devices && j.contains("devices")) devices = &j.at("devices");
  read_devices(devices, r, log);
  read_results(j, r, log);
  read_footer(j, r, log);
  if (log.collective.empty()) infer_collective_from_path(log);
  if (log.collective.empty()) infer_collective_from_rows(log);
  resolve_num_ranks(log, json_rank_evidence(log));
  check_busbw(log);
  check_avg_busbw(log);
  return log;
}

}  // namespace collbench::record
