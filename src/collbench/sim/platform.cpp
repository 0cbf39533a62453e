// SimGrid platform generation from a system profile; see platform.hpp for the model.
#include "collbench/sim/platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "collbench/core/error.hpp"

namespace collbench::sim {
namespace {

// Links are SPLITDUPLEX: SimGrid gives each direction (UP, DOWN) the full bandwidth.
void append_link(std::string& xml, const LinkSpec& l, const char* indent) {
  xml += fmt::format("{}<link id=\"{}\" bandwidth=\"{}\" latency=\"{}\" sharing_policy=\"SPLITDUPLEX\"/>\n", indent,
                     l.name, simgrid_bandwidth(l.bytes_per_s), simgrid_latency(l.latency_s));
}

void append_route(std::string& xml, const std::string& src, const std::string& dst,
                  const std::vector<std::pair<std::string, const char*>>& hops) {
  xml += fmt::format("    <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">", src, dst);
  for (const auto& [link, dir] : hops) xml += fmt::format("<link_ctn id=\"{}\" direction=\"{}\"/>", link, dir);
  xml += "</route>\n";
}

std::vector<int> domain_sizes_for(int gpus, int per_domain) {
  std::vector<int> sizes(static_cast<std::size_t>(gpus / per_domain), per_domain);
  if (gpus % per_domain != 0) sizes.push_back(gpus % per_domain);
  return sizes;
}

void check_spec(const model::SystemProfile& p, const PlatformSpec& spec, int per_domain) {
  if (spec.gpus < 2) throw InputError(fmt::format("--gpus {}: a simulated platform needs at least 2 GPUs", spec.gpus));
  if (spec.gpus > kMaxSimulatedGpus) {
    throw InputError(fmt::format("--gpus {}: a simulated platform takes at most {} GPUs; accepted: 2 to {}", spec.gpus,
                                 kMaxSimulatedGpus, kMaxSimulatedGpus));
  }
  if (per_domain < 1) {
    throw InputError(
        fmt::format("system '{}' fixes no scale-up domain size (scale_up.domain_size); pass "
                    "--ranks-per-domain",
                    p.name));
  }
  if (p.scale_up.domain_size > 0 && per_domain > p.scale_up.domain_size) {
    throw InputError(
        fmt::format("--ranks-per-domain {}: system '{}' has {} GPUs per scale-up domain; accepted: 1 to {}", per_domain,
                    p.name, p.scale_up.domain_size, p.scale_up.domain_size));
  }
  if (p.scale_up.bytes_per_s <= 0 || p.scale_out.nic_bytes_per_s <= 0 || p.scale_out.nics_per_gpu < 1) {
    throw InputError(
        fmt::format("system '{}' lacks scale_up.bandwidth or scale_out.nic_bandwidth/nics_per_gpu, which "
                    "a simulated platform needs",
                    p.name));
  }
}

// Every link of the platform, before degradation: per GPU loop, nvl, nic; per domain uplink.
std::vector<LinkSpec> base_links(const model::SystemProfile& p, const std::vector<int>& sizes) {
  // Device-local copy for messages to self: the profile's memory-copy rate, else 4x NVLink.
  const double loop_bw = p.memory_copy_bytes_per_s.value_or(4.0 * p.scale_up.bytes_per_s);
  const double nic_bw = p.scale_out.nics_per_gpu * p.scale_out.nic_bytes_per_s;
  std::vector<LinkSpec> links;
  int g = 0;
  for (int size : sizes) {
    for (int i = 0; i < size; ++i, ++g) {
      links.push_back({fmt::format("loop-{}", g), loop_bw, 0.0});
      links.push_back({fmt::format("nvl-{}", g), p.scale_up.bytes_per_s, p.scale_up.hop_latency_s / 2});
      links.push_back({fmt::format("nic-{}", g), nic_bw, p.scale_out.hop_latency_s / 2});
    }
  }
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    links.push_back({fmt::format("uplink-{}", d), sizes[d] * nic_bw / p.scale_out.oversubscription, 0.0});
  }
  return links;
}

void apply_degrade(std::vector<LinkSpec>& links, const std::map<std::string, double>& degrade, int gpus, int domains) {
  for (const auto& entry : degrade) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    auto it = std::find_if(links.begin(), links.end(), [&name](const LinkSpec& l) { return l.name == name; });
    if (it == links.end()) {
      throw InputError(
          fmt::format("--degrade {}: no such link; accepted: nvl-G or nic-G with G in 0..{}, uplink-D with "
                      "D in 0..{}",
                      name, gpus - 1, domains - 1));
    }
    it->bytes_per_s *= entry.second;
  }
}

void append_domain(std::string& xml, const std::vector<LinkSpec>& links, int d, int first, int size) {
  const std::string gw = fmt::format("domain-{}-gw", d);
  xml += fmt::format("  <zone id=\"domain-{}\" routing=\"Full\">\n", d);
  for (int g = first; g < first + size; ++g) xml += fmt::format("    <host id=\"gpu-{}\" speed=\"1Tf\"/>\n", g);
  xml += fmt::format("    <router id=\"{}\"/>\n", gw);
  for (int g = first; g < first + size; ++g) {
    for (int k = 0; k < 3; ++k) append_link(xml, links[static_cast<std::size_t>(3 * g + k)], "    ");
  }
  for (int a = first; a < first + size; ++a) {
    const std::string ha = fmt::format("gpu-{}", a);
    append_route(xml, ha, ha, {{fmt::format("loop-{}", a), "UP"}});
    for (int b = first; b < first + size; ++b) {
      if (a != b)
        append_route(xml, ha, fmt::format("gpu-{}", b),
                     {{fmt::format("nvl-{}", a), "UP"}, {fmt::format("nvl-{}", b), "DOWN"}});
    }
    append_route(xml, ha, gw, {{fmt::format("nic-{}", a), "UP"}});
    append_route(xml, gw, ha, {{fmt::format("nic-{}", a), "DOWN"}});
  }
  xml += "  </zone>\n";
}

std::string render_xml(const Platform& pl, const model::SystemProfile& p) {
  std::string xml = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";
  xml += fmt::format(
      "<!-- collbench simulate platform: system {} ({}), {} GPUs, {} per domain, {} domain(s).\n"
      "     Generated from the profile; see docs/simulation.md for what is and is not modelled. -->\n",
      p.name, p.digest, pl.gpus, pl.ranks_per_domain, pl.domain_sizes.size());
  xml += "<platform version=\"4.1\">\n<zone id=\"fabric\" routing=\"Full\">\n";
  int first = 0;
  for (std::size_t d = 0; d < pl.domain_sizes.size(); ++d) {
    append_domain(xml, pl.links, static_cast<int>(d), first, pl.domain_sizes[d]);
    first += pl.domain_sizes[d];
  }
  const std::size_t uplinks = 3 * static_cast<std::size_t>(pl.gpus);
  for (std::size_t d = 0; d < pl.domain_sizes.size(); ++d) append_link(xml, pl.links[uplinks + d], "  ");
  for (std::size_t a = 0; a < pl.domain_sizes.size(); ++a) {
    for (std::size_t b = 0; b < pl.domain_sizes.size(); ++b) {
      if (a == b) continue;
      xml += fmt::format(
          "  <zoneRoute src=\"domain-{0}\" dst=\"domain-{1}\" gw_src=\"domain-{0}-gw\" "
          "gw_dst=\"domain-{1}-gw\" symmetrical=\"NO\"><link_ctn id=\"uplink-{0}\" direction=\"UP\"/>"
          "<link_ctn id=\"uplink-{1}\" direction=\"DOWN\"/></zoneRoute>\n",
          a, b);
    }
  }
  xml += "</zone>\n</platform>\n";
  return xml;
}

}  // namespace

std::string simgrid_bandwidth(double bytes_per_s) {
  return fmt::format("{:.0f}Bps", std::round(bytes_per_s));
}

std::string simgrid_latency(double seconds) {
  return fmt::format("{:.6g}us", seconds * 1e6);
}

std::pair<std::string, double> parse_degrade(const std::string& text) {
  const auto eq = text.find('=');
  const auto bad = [&](std::string_view why) {
    return InputError(
        fmt::format("--degrade '{}': {}; expected LINK=FACTOR, e.g. nic-17=0.25 (LINK: nvl-G, nic-G or "
                    "uplink-D; FACTOR in (0, 1])",
                    text, why));
  };
  if (eq == std::string::npos || eq == 0) throw bad("no LINK=FACTOR");
  double factor = 0;
  try {
    std::size_t used = 0;
    factor = std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1) throw bad("the factor is not a number");
  } catch (const std::logic_error&) {
    throw bad("the factor is not a number");
  }
  if (!(factor > 0 && factor <= 1)) throw bad("the factor is outside (0, 1]");
  return {text.substr(0, eq), factor};
}

Platform make_platform(const model::SystemProfile& profile, const PlatformSpec& spec) {
  const int per_domain = spec.ranks_per_domain > 0 ? spec.ranks_per_domain : profile.scale_up.domain_size;
  check_spec(profile, spec, per_domain);
  Platform pl;
  pl.system = profile.name;
  pl.gpus = spec.gpus;
  pl.ranks_per_domain = per_domain;
  pl.domain_sizes = domain_sizes_for(spec.gpus, per_domain);
  pl.links = base_links(profile, pl.domain_sizes);
  apply_degrade(pl.links, spec.degrade, spec.gpus, static_cast<int>(pl.domain_sizes.size()));
  pl.xml = render_xml(pl, profile);
  for (int g = 0; g < spec.gpus; ++g) pl.hostfile += fmt::format("gpu-{}\n", g);
  return pl;
}

}  // namespace collbench::sim
