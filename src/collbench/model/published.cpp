// Published points: loading (strict, like every profile), evaluation by the model, and the
// "checked range" every model output, report and accept verdict states (published.hpp).
#include "collbench/model/published.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "collbench/core/error.hpp"
#include "collbench/core/input_file.hpp"
#include "collbench/core/paths.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::model {
namespace {

namespace fs = std::filesystem;
using yamlio::Reader;

const std::vector<std::string> kTopKeys{"system", "points"};
const std::vector<std::string> kPointKeys{"collective", "algo",  "dtype",  "domain_sizes",
                                          "bytes",      "busbw", "source", "note"};

std::vector<int> read_sizes(const Reader& r, const YAML::Node& node, const std::string& key) {
  if (!node.IsSequence() || node.size() == 0) r.fail(node.Mark(), key, "expected a non-empty list of GPU counts");
  std::vector<int> out;
  for (const auto& v : node) out.push_back(r.integer(v, key, 1));
  return out;
}

PublishedPoint read_point(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.check_map(node, path, kPointKeys, Reader::EmptyValues::reject);
  PublishedPoint p;
  p.collective = r.text(r.required(node, path, "collective"), path + ".collective");
  if (const YAML::Node a = r.optional(node, path, "algo"); a.IsDefined()) p.algo = r.text(a, path + ".algo");
  if (const YAML::Node d = r.optional(node, path, "dtype"); d.IsDefined()) {
    p.dtype = r.at(d, path + ".dtype", [&] { return parse_dtype(r.text(d, path + ".dtype")); });
  }
  p.domain_sizes = read_sizes(r, r.required(node, path, "domain_sizes"), path + ".domain_sizes");
  const YAML::Node b = r.required(node, path, "bytes");
  p.bytes = r.at(b, path + ".bytes", [&] { return parse_bytes(r.text(b, path + ".bytes")); });
  const YAML::Node bw = r.required(node, path, "busbw");
  p.measured_busbw_gbps =
      r.at(bw, path + ".busbw", [&] { return parse_rate(r.text(bw, path + ".busbw")).bytes_per_s; }) / kBytesPerGB;
  p.source = r.text(r.required(node, path, "source"), path + ".source");
  if (const YAML::Node n = r.optional(node, path, "note"); n.IsDefined()) p.note = r.text(n, path + ".note");
  return p;
}

double log2_distance(int a, int b) {
  return std::abs(std::log2(static_cast<double>(a) / b));
}

}  // namespace

int PublishedPoint::gpus() const {
  return std::accumulate(domain_sizes.begin(), domain_sizes.end(), 0);
}

PublishedPoints parse_published_points(std::string_view yaml_text, const std::string& origin) {
  const Reader r(origin);
  const YAML::Node root = yamlio::load_document(r, yaml_text, "published points file");
  r.check_map(root, "", kTopKeys);
  PublishedPoints out;
  out.system = r.text(r.required(root, "", "system"), "system");
  const YAML::Node points = r.required(root, "", "points");
  if (!points.IsSequence()) r.fail(points.Mark(), "points", "expected a list of points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    out.points.push_back(read_point(r, points[i], fmt::format("points[{}]", i)));
  }
  return out;
}

PublishedPoints load_published_points(const std::string& system) {
  for (const auto& dir : profile_search_dirs()) {
    const fs::path path = fs::path(dir) / "published" / (system + ".yaml");
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    PublishedPoints p =
        parse_published_points(read_input_file(path.string(), "published points", "a YAML file"), path.string());
    if (p.system != system) {
      throw InputError(fmt::format("{}: key 'system': '{}' does not match the file name's system '{}'", path.string(),
                                   p.system, system));
    }
    p.path = path.string();
    return p;
  }
  return PublishedPoints{system, {}, ""};
}

CheckedPoint check_point(const SystemProfile& system, const PublishedPoint& point) {
  CaseGeometry g;
  g.collective = point.collective;
  g.algo = point.algo;
  g.dtype = point.dtype;
  g.bytes = point.bytes;
  g.placement = placement_from_sizes(point.gpus(), point.domain_sizes);
  CheckedPoint c;
  c.point = &point;
  c.estimate = estimate(system, g);
  if (c.estimate && c.estimate->expected_busbw_gbps > 0.0) {
    c.measured_over_expected = point.measured_busbw_gbps / c.estimate->expected_busbw_gbps;
    c.measured_over_bound = point.measured_busbw_gbps / c.estimate->bound_busbw_gbps;
  }
  return c;
}

CheckedRange checked_range(const SystemProfile& system, const PublishedPoints& points, std::string_view collective,
                           int gpus, double confirm) {
  CheckedRange out;
  const PublishedPoint* below = nullptr;
  const PublishedPoint* above = nullptr;
  for (const auto& p : points.points) {
    if (p.collective != collective) continue;
    out.largest_gpus = std::max(out.largest_gpus, p.gpus());
    const CheckedPoint c = check_point(system, p);
    if (c.estimate && c.measured_over_expected >= confirm && c.measured_over_bound <= 1.0) {
      out.confirmed_gpus = std::max(out.confirmed_gpus, p.gpus());
    }
    auto closer = [&](const PublishedPoint* best) {
      return best == nullptr || log2_distance(p.gpus(), gpus) < log2_distance(best->gpus(), gpus);
    };
    if (p.gpus() <= gpus && closer(below)) below = &p;
    if (p.gpus() > gpus && closer(above)) above = &p;
  }
  if (below != nullptr) out.nearest.push_back(below);
  if (above != nullptr) out.nearest.push_back(above);
  return out;
}

std::string checked_range_line(const SystemProfile& system, const PublishedPoints& points, std::string_view collective,
                               int gpus) {
  const CheckedRange range = checked_range(system, points, collective, gpus);
  if (range.largest_gpus == 0) {
    return fmt::format("{} {}: not checked against any published measurement (docs/model.md, \"Validated range\")",
                       system.name, collective);
  }
  std::vector<std::string> near;
  for (const PublishedPoint* p : range.nearest) {
    const CheckedPoint c = check_point(system, *p);
    near.push_back(fmt::format("{} GPUs ({}) at {}: {:.1f} GB/s busbw, {:.2f} of expected ({})", p->gpus(),
                               packing_string(placement_from_sizes(p->gpus(), p->domain_sizes)), format_bytes(p->bytes),
                               p->measured_busbw_gbps, c.measured_over_expected, p->source));
  }
  const std::string held = range.confirmed_gpus > 0 ? fmt::format("up to {} GPUs", range.confirmed_gpus)
                                                    : std::string("at no published point");
  return fmt::format(
      "{} {}: published points up to {} GPUs; the expected value held (>= {:g} of expected) {}{}; "
      "nearest to {} GPUs: {}",
      system.name, collective, range.largest_gpus, kConfirmsExpected, held,
      gpus > range.confirmed_gpus ? fmt::format(" ({} GPUs is beyond)", gpus) : std::string(), gpus,
      fmt::join(near, "; "));
}

}  // namespace collbench::model
