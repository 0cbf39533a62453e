// HTML pages for case reports, comparisons and weak scaling (html.hpp).
#include "collbench/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/report/html_detail.hpp"
#include "collbench/report/number_text.hpp"
#include "collbench/report/svg.hpp"

namespace collbench::report {

using record::CaseRecord;

namespace html_detail {

std::string esc(std::string_view s) {
  return xml_escape(s);
}

std::string opt_text(const std::optional<std::string>& v) {
  return v ? esc(*v) : std::string("–");
}

std::string size_cell(std::uint64_t bytes) {
  return fmt::format(R"(<td class="n" title="{} bytes">{}</td>)", bytes, esc(format_bytes(bytes)));
}

std::string td(std::string_view html_text, std::string_view cls) {
  return cls.empty() ? fmt::format("<td>{}</td>", html_text) : fmt::format(R"(<td class="{}">{}</td>)", cls, html_text);
}

std::string th_row(const std::vector<std::pair<std::string, bool>>& cols) {
  std::string out = "<thead><tr>";
  for (const auto& [name, numeric] : cols)
    out += numeric ? "<th class=\"n\">" + name + "</th>" : "<th>" + name + "</th>";
  return out + "</tr></thead>";
}

std::string list_items(const std::vector<std::string>& items, std::string_view prefix) {
  if (items.empty()) return "";
  std::string out = "<ul class=\"notes\">";
  for (const auto& i : items) out += "<li>" + esc(std::string(prefix) + i) + "</li>";
  return out + "</ul>";
}

}  // namespace html_detail

using html_detail::esc;
using html_detail::list_items;
using html_detail::opt_text;
using html_detail::size_cell;
using html_detail::td;
using html_detail::th_row;

namespace {

constexpr std::string_view kCss = R"css(
:root{--fg:#1d2329;--muted:#5f6b76;--line:#dfe3e8;--bg:#f4f6f8;--pass:#2b8a3e;--fail:#c92a2a;--waived:#868e96;
--accent:#0b5cad;--head:#12263f}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);
background:var(--bg)}
header.top{background:var(--head);color:#fff;padding:18px 32px 16px}
header.top h1{margin:0;font-size:22px;font-weight:650;letter-spacing:.2px}
header.top .subtitle{color:#c9d6e3;margin-top:4px}
header.top .subtitle code{background:rgba(255,255,255,.12);color:#fff}
main{max-width:1280px;margin:0 auto;padding:8px 32px 8px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 20px 16px;margin:16px 0}
h2{font-size:18px;margin:2px 0 10px}
h3{font-size:15px;margin:18px 0 6px}
h4{font-size:13.5px;margin:14px 0 4px;color:var(--muted)}
p{margin:6px 0}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:4px 0 4px}
.card{flex:1 1 150px;border:1px solid var(--line);border-radius:8px;padding:10px 14px;background:#fff;min-width:140px}
.card .k{color:var(--muted);font-size:11.5px;text-transform:uppercase;letter-spacing:.4px}
.card .v{font-size:20px;font-weight:650;margin-top:2px;overflow-wrap:anywhere}
.card .d{color:var(--muted);font-size:12px;margin-top:2px}
.card.pass{border-left:5px solid var(--pass)} .card.fail{border-left:5px solid var(--fail)}
.card.waived{border-left:5px solid var(--waived)}
.card.pass .v{color:var(--pass)} .card.fail .v{color:var(--fail)}
.table-wrap{overflow-x:auto;margin:6px 0}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{padding:4px 7px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap;vertical-align:top}
th{background:#eef1f4;font-weight:600;white-space:normal;vertical-align:bottom;min-width:3em}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.wrap{white-space:normal;min-width:180px;max-width:460px}
tbody tr:nth-child(even) td{background:#fafbfc}
tr.projected td{background:#f7f3fb!important;font-style:italic}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:650;font-size:11.5px;color:#fff;
background:var(--waived);letter-spacing:.3px}
.badge.pass,.badge.ok{background:var(--pass)} .badge.fail,.badge.failed{background:var(--fail)}
.badge.waived,.badge.n-a{background:var(--waived)} .badge.projected{background:#7048e8}
.verdict{font-size:28px;font-weight:750;padding:4px 16px;border-radius:8px;color:#fff;display:inline-block}
.verdict.pass{background:var(--pass)} .verdict.fail{background:var(--fail)}
.better{color:var(--pass)} .worse{color:var(--fail)}
.charts{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0}
.charts svg{flex:1 1 520px;max-width:640px;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
.note,.muted{color:var(--muted)}
ul.notes{margin:6px 0;padding-left:20px;color:var(--muted)}
.warning{background:#fff4e6;border-left:4px solid #e8590c;padding:8px 12px;margin:8px 0;border-radius:4px}
.callout{background:#eef4fb;border-left:4px solid var(--accent);padding:8px 12px;margin:8px 0;border-radius:4px}
code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px;background:#f1f3f5;
padding:1px 4px;border-radius:4px;overflow-wrap:anywhere}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 18px;margin:6px 0}
dl.kv dt{color:var(--muted)} dl.kv dd{margin:0;overflow-wrap:anywhere}
details{margin:6px 0} summary{cursor:pointer;color:var(--accent)}
footer{color:var(--muted);font-size:12px;padding:8px 32px 32px;max-width:1280px;margin:0 auto}
@media print{body{background:#fff} header.top{background:#fff;color:#000;border-bottom:2px solid #000}
header.top .subtitle{color:#333} section{border:none;padding:0;break-inside:avoid-page} .charts svg{border:none}}
)css";

std::string system_name(const nlohmann::json& system) {
  if (system.is_object() && system.contains("name") && system["name"].is_string()) {
    return system["name"].get<std::string>();
  }
  return "";
}

// "node1 (ranks 0-3), node2 (ranks 4-7)": consecutive ranks of one host folded into a range.
std::string hosts_text(const std::vector<record::HostInfo>& hosts) {
  if (hosts.empty()) return "–";
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < hosts.size()) {
    std::size_t j = i;
    while (j + 1 < hosts.size() && hosts[j + 1].host == hosts[i].host && hosts[j + 1].rank == hosts[j].rank + 1) ++j;
    parts.push_back(i == j ? fmt::format("{} (rank {})", hosts[i].host, hosts[i].rank)
                           : fmt::format("{} (ranks {}-{})", hosts[i].host, hosts[i].rank, hosts[j].rank));
    i = j + 1;
  }
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k == 12) {
      out += fmt::format(", ... ({} more runs of ranks)", parts.size() - k);
      break;
    }
    out += (k ? ", " : "") + parts[k];
  }
  return out;
}

std::string group_title(const CaseRecord& r) {
  std::string t = r.collective + " · " + r.dtype;
  if (r.redop) t += " · " + *r.redop;
  t += fmt::format(" · {} · {} · {} · {} · {} rank{}", r.backend, r.algo_requested, r.scope,
                   r.in_place ? "in-place" : "out-of-place", r.num_ranks, r.num_ranks == 1 ? "" : "s");
  if (r.timing != "isolated") t += " · " + r.timing;
  return t;
}

std::string group_key(const CaseRecord& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.collective, r.redop.value_or(""), r.dtype, r.backend,
                     r.algo_requested, r.scope, r.in_place, r.timing, r.num_ranks, domains_text(r.domain_sizes));
}

std::string check_badge(const CaseRecord& r) {
  if (!r.checked) return html::badge("N/A");
  return r.wrong_total == 0 ? html::badge("PASS") : html::badge("FAIL");
}

}  // namespace

namespace html {

std::string escape(std::string_view text) {
  return xml_escape(text);
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (const char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

std::string page(std::string_view title, std::string_view subtitle_html, std::string_view body_html,
                 const HtmlContext& ctx) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // No scripts, no remote loads: the page is viewable offline and inert whatever its input held.
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<meta name=\"generator\" content=\"{}\">\n", esc(ctx.generator));
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(title), kCss);
  out += fmt::format("<header class=\"top\"><h1>{}</h1><div class=\"subtitle\">{}</div></header>\n<main>\n", esc(title),
                     subtitle_html);
  out += body_html;
  out += "</main>\n<footer>";
  out += fmt::format("Generated by {}{}.", esc(ctx.generator.empty() ? "collbench" : ctx.generator),
                     ctx.generated_at.empty() ? "" : " at " + esc(ctx.generated_at));
  if (!ctx.command.empty()) out += fmt::format(" Command: <code>{}</code>.", esc(shell_join(ctx.command)));
  out +=
      " Self-contained page: no scripts, nothing loaded from the network. Measured values come from the result "
      "records; model values are labelled with their system profile; projections are labelled "
      "<em>projected</em>.</footer>\n</body>\n</html>\n";
  return out;
}

std::string badge(std::string_view word) {
  std::string cls;
  for (const char c : word) {
    const auto u = static_cast<unsigned char>(c);
    cls += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  return fmt::format(R"(<span class="badge {}">{}</span>)", esc(cls), esc(word));
}

std::string cards(const std::vector<Card>& items) {
  std::string out = "<div class=\"cards\">";
  for (const auto& c : items) {
    out += fmt::format(R"(<div class="card{}"><div class="k">{}</div><div class="v">{}</div>{}</div>)",
                       c.css_class.empty() ? "" : " " + esc(c.css_class), esc(c.label), esc(c.value),
                       c.detail.empty() ? "" : "<div class=\"d\">" + esc(c.detail) + "</div>");
  }
  return out + "</div>\n";
}

}  // namespace html

namespace {

// The run header's facts as a definition list.
std::string header_facts(const record::RunHeader& h) {
  std::string out;
  const auto kv = [&out](std::string_view k, const std::string& v_html) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", esc(k), v_html);
  };
  out += "<dl class=\"kv\">";
  kv("run id", "<code>" + esc(h.run_id) + "</code>");
  kv("started", esc(h.started_at));
  kv("collbench", fmt::format("{} (git <code>{}</code>)", esc(h.tool_version), esc(h.git_sha)));
  kv("command line", h.argv.empty() ? "–" : "<code>" + esc(html::shell_join(h.argv)) + "</code>");
  if (h.config.is_object()) {
    for (const char* key : {"name", "description", "source"}) {
      if (h.config.contains(key) && h.config[key].is_string() && !h.config[key].get<std::string>().empty()) {
        kv(std::string("sweep ") + key, esc(h.config[key].get<std::string>()));
      }
    }
  }
  kv("launcher", esc(h.launcher));
  kv("ranks", fmt::format("{}", h.hosts.size()));
  kv("hosts", esc(hosts_text(h.hosts)));
  const std::string sys = system_name(h.system);
  std::string sys_html = sys.empty() ? std::string("none") : esc(sys);
  if (h.system.is_object() && h.system.contains("digest") && h.system["digest"].is_string()) {
    sys_html += fmt::format(" (digest <code>{}</code>)", esc(h.system["digest"].get<std::string>()));
  }
  kv("system profile", sys_html);
  kv("MPI", opt_text(h.mpi_library));
  kv("NCCL", opt_text(h.nccl_version));
  kv("CUDA runtime / driver", opt_text(h.cuda_runtime) + " / " + opt_text(h.cuda_driver));
  kv("backends built", esc(fmt::format("{}", fmt::join(h.backends_built, ", "))));
  if (h.fault) kv("injected fault", "<strong>" + esc(*h.fault) + "</strong>");
  out += "</dl>\n";
  return out;
}

// The ranks and hosts table (with GPUs and NICs when any rank names one), and the environment.
std::string hosts_and_env(const record::RunHeader& h) {
  std::string out;
  bool any_gpu = false;
  for (const auto& host : h.hosts) any_gpu |= host.gpu_name.has_value() || host.nic.has_value();
  out +=
      fmt::format("<details><summary>ranks and hosts ({})</summary><div class=\"table-wrap\"><table>", h.hosts.size());
  out += any_gpu ? th_row({{"rank", true},
                           {"host", false},
                           {"pid", true},
                           {"GPU", false},
                           {"GPU UUID", false},
                           {"PCI bus", false},
                           {"NIC", false}})
                 : th_row({{"rank", true}, {"host", false}, {"pid", true}});
  out += "<tbody>";
  for (const auto& host : h.hosts) {
    out += fmt::format("<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>", host.rank, esc(host.host),
                       host.pid);
    if (any_gpu) {
      out += td(opt_text(host.gpu_name)) + td(opt_text(host.gpu_uuid)) + td(opt_text(host.pci_bus_id)) +
             td(opt_text(host.nic));
    }
    out += "</tr>";
  }
  out += "</tbody></table></div></details>\n";
  if (!h.env.empty()) {
    out += fmt::format("<details><summary>environment ({} variables)</summary><div class=\"table-wrap\"><table>",
                       h.env.size());
    out += th_row({{"variable", false}, {"value", false}}) + "<tbody>";
    for (const auto& [k, v] : h.env) out += "<tr>" + td("<code>" + esc(k) + "</code>") + td(esc(v), "wrap") + "</tr>";
    out += "</tbody></table></div></details>\n";
  }
  return out;
}

}  // namespace

namespace html {

std::string provenance_section(const std::vector<record::InputFile>& files, std::string_view heading) {
  std::string out = fmt::format("<section class=\"provenance\"><h2>{}</h2>\n", esc(heading));
  for (const auto& f : files) {
    out += fmt::format("<h3><code>{}</code></h3>\n", esc(f.path));
    if (!f.header) {
      out += "<p class=\"note\">No run header in this file: its provenance is unknown.</p>\n";
      continue;
    }
    out += header_facts(*f.header) + hosts_and_env(*f.header);
    for (const auto& w : f.warnings) out += fmt::format("<div class=\"warning\">warning: {}</div>\n", esc(w));
  }
  return out + "</section>\n";
}

std::string case_table(const std::vector<CaseRecord>& records) {
  std::string out = "<div class=\"table-wrap\"><table class=\"cases\">";
  out += th_row({{"collective", false},
                 {"size", true},
                 {"count", true},
                 {"type", false},
                 {"redop", false},
                 {"algo", false},
                 {"scope", false},
                 {"place", false},
                 {"ranks", true},
                 {"domains", false},
                 {"timing", false},
                 {"time p50 (us)", true},
                 {"p99 (us)", true},
                 {"algbw (GB/s)", true},
                 {"busbw (GB/s)", true},
                 {"% bound", true},
                 {"check", false},
                 {"samples", true},
                 {"status", false}});
  out += "<tbody>\n";
  for (const auto& r : records) {
    const std::string algo = r.algo_used ? *r.algo_used : r.algo_requested;
    out += "<tr class=\"case\">" + td(esc(r.collective)) + size_cell(r.bytes) + td(fmt::format("{}", r.count), "n") +
           td(esc(r.dtype)) + td(opt_text(r.redop)) + td(esc(algo)) + td(esc(r.scope)) + td(r.in_place ? "in" : "out") +
           td(fmt::format("{}", r.num_ranks), "n") + td(esc(domains_text(r.domain_sizes))) + td(esc(r.timing));
    if (r.time_us) {
      out += td(number_text(r.time_us->p50, 2), "n") + td(number_text(r.time_us->p99, 2), "n") +
             td(number_text(r.algbw_gbps, 3), "n") + td(number_text(r.busbw_gbps, 3), "n") +
             td(r.model ? number_text(100.0 * r.model->efficiency, 1) : "–", "n");
    } else {
      out += td("–", "n") + td("–", "n") + td("–", "n") + td("–", "n") + td("–", "n");
    }
    std::string check = check_badge(r);
    if (r.checked && r.wrong_total > 0) check += fmt::format(" {} wrong", r.wrong_total);
    out += td(check) + td(fmt::format("{}", r.iterations), "n");
    std::string status = badge(r.status);
    if (r.reason && !r.reason->empty()) status += " " + esc(*r.reason);
    out += td(status, "wrap") + "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string busbw_charts(const record::InputFile& file) {
  // Groups in first-seen order; only measured cases (status ok, with timing).
  std::vector<std::string> order;
  std::map<std::string, std::vector<const CaseRecord*>> groups;
  for (const auto& r : file.cases) {
    if (r.status != "ok" || !r.time_us || r.bytes == 0) continue;
    const std::string key = group_key(r);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  std::string charts;
  std::vector<std::string> skipped;
  for (const auto& key : order) {
    auto& g = groups[key];
    std::stable_sort(g.begin(), g.end(), [](const CaseRecord* a, const CaseRecord* b) { return a->bytes < b->bytes; });
    svg::LineChart c;
    c.title = group_title(*g.front());
    c.x_label = "message size (bytes, log2)";
    c.y_label = "busbw (GB/s)";
    svg::Series measured{"measured busbw (p50)", {}, svg::Stroke::solid, true, false, "", 0};
    svg::Series bound{"", {}, svg::Stroke::dashed, false, false, "", 7};
    svg::Series expected{"", {}, svg::Stroke::dotted, false, false, "", 1};
    bool any_positive = false;
    std::set<std::string> systems;
    for (const CaseRecord* r : g) {
      measured.points.push_back({static_cast<double>(r->bytes), r->busbw_gbps, std::nullopt, std::nullopt});
      any_positive |= r->busbw_gbps > 0.0;
      if (r->model && r->model->bound_busbw_gbps > 0.0) {
        bound.points.push_back({static_cast<double>(r->bytes), r->model->bound_busbw_gbps, std::nullopt, std::nullopt});
        expected.points.push_back(
            {static_cast<double>(r->bytes), r->model->expected_busbw_gbps, std::nullopt, std::nullopt});
        systems.insert(r->model->system);
      }
    }
    if (!any_positive && bound.points.empty()) {
      skipped.push_back(c.title);
      continue;
    }
    const std::string sys = fmt::format("{}", fmt::join(systems, ", "));
    bound.label = "bound (model: " + sys + ")";
    expected.label = "expected (model: " + sys + ")";
    c.series.push_back(measured);
    if (!bound.points.empty()) {
      c.series.push_back(bound);
      if (std::any_of(expected.points.begin(), expected.points.end(), [](const svg::Point& p) { return p.y > 0; })) {
        c.series.push_back(expected);
      }
    }
    charts += svg::render_line_chart(c) + "\n";
  }
  std::string out;
  if (!charts.empty()) out += "<div class=\"charts\">\n" + charts + "</div>\n";
  if (!skipped.empty()) {
    out += "<p class=\"note\">Not plotted (busbw is 0, e.g. one rank, and no bound in the records): " +
           esc(fmt::format("{}", fmt::join(skipped, "; "))) + ".</p>\n";
  }
  return out;
}

}  // namespace html

namespace {

// Charts: busbw vs size of the baseline and the other, per matched group.
std::string comparison_charts(const compare::Comparison& c, const std::string& other) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const compare::ComparisonRow*>> groups;
  for (const auto& r : c.rows) {
    if (r.other != other) continue;
    const std::string key =
        fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", r.collective, r.dtype, r.redop.value_or(""), r.backend, r.algo,
                    r.scope, r.in_place, r.num_ranks, domains_text(r.domain_sizes));
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  std::string charts;
  for (const auto& key : order) {
    const auto& g = groups[key];
    if (g.size() < 2) continue;
    const compare::ComparisonRow& f = *g.front();
    svg::LineChart chart;
    chart.title = fmt::format("{} · {}{} · {} · {} · {} ranks", f.collective, f.dtype, f.redop ? " · " + *f.redop : "",
                              c.by == compare::CompareBy::algo ? std::string("*") : f.algo, f.scope, f.num_ranks);
    chart.x_label = "message size (bytes, log2)";
    chart.y_label = "busbw (GB/s)";
    svg::Series base{"baseline: " + c.baseline, {}, svg::Stroke::solid, true, false, "", 0};
    svg::Series oth{other, {}, svg::Stroke::solid, true, false, "", 1};
    for (const compare::ComparisonRow* r : g) {
      base.points.push_back({static_cast<double>(r->bytes), r->base_busbw_gbps, std::nullopt, std::nullopt});
      oth.points.push_back({static_cast<double>(r->bytes), r->other_busbw_gbps, std::nullopt, std::nullopt});
    }
    chart.series = {base, oth};
    charts += svg::render_line_chart(chart) + "\n";
  }
  return charts;
}

// The matched cases of `other` against the baseline, one row each.
std::string comparison_table(const compare::Comparison& c, const std::string& other) {
  std::string out;
  out += "<div class=\"table-wrap\"><table class=\"comparison\">";
  out += th_row({{"collective", false},
                 {"ranks", true},
                 {"type", false},
                 {"redop", false},
                 {"algo", false},
                 {"scope", false},
                 {"place", false},
                 {"size", true},
                 {"baseline p50 (us)", true},
                 {"p50 (us)", true},
                 {"time ratio", true},
                 {"time % change", true},
                 {"baseline busbw (GB/s)", true},
                 {"busbw (GB/s)", true},
                 {"busbw ratio", true},
                 {"busbw % change", true}});
  out += "<tbody>\n";
  std::size_t n = 0;
  for (const auto& r : c.rows) {
    if (r.other != other) continue;
    ++n;
    const char* time_cls = r.time_change_pct > 0.0 ? "n worse" : r.time_change_pct < 0.0 ? "n better" : "n";
    const char* bw_cls = !r.busbw_change_pct ? "n" : *r.busbw_change_pct < 0.0 ? "n worse" : "n better";
    out += "<tr class=\"comparison-row\">" + td(esc(r.collective)) + td(fmt::format("{}", r.num_ranks), "n") +
           td(esc(r.dtype)) + td(opt_text(r.redop)) + td(c.by == compare::CompareBy::algo ? "*" : esc(r.algo)) +
           td(esc(r.scope)) + td(r.in_place ? "in" : "out") + size_cell(r.bytes) +
           td(number_text(r.base_p50_us, 2), "n") + td(number_text(r.other_p50_us, 2), "n") +
           td(fmt::format("{:.3f}", r.time_ratio), "n") + td(fmt::format("{:+.1f}", r.time_change_pct), time_cls) +
           td(number_text(r.base_busbw_gbps, 3), "n") + td(number_text(r.other_busbw_gbps, 3), "n") +
           td(r.busbw_ratio ? fmt::format("{:.3f}", *r.busbw_ratio) : "–", "n") +
           td(r.busbw_change_pct ? fmt::format("{:+.1f}", *r.busbw_change_pct) : "–", bw_cls) + "</tr>\n";
  }
  if (n == 0) out += "<tr><td colspan=\"16\" class=\"note\">no matching cases</td></tr>\n";
  out += "</tbody></table></div>\n";
  return out;
}

std::string comparison_section(const compare::Comparison& c) {
  std::string out = fmt::format("<section class=\"comparison\"><h2>Comparison by {} (baseline: <code>{}</code>)</h2>\n",
                                esc(to_string(c.by)), esc(c.baseline));
  out +=
      "<p class=\"note\">time ratio = p50 / baseline p50 (&gt; 1: slower); busbw ratio = busbw / baseline busbw "
      "(&gt; 1: faster). Only cases with status ok and timing statistics are compared.</p>\n";
  for (const auto& other : c.others) {
    out += fmt::format("<h3><code>{}</code> vs <code>{}</code></h3>\n", esc(other), esc(c.baseline));
    const std::string charts = comparison_charts(c, other);
    if (!charts.empty()) out += "<div class=\"charts\">\n" + charts + "</div>\n";
    out += comparison_table(c, other);
  }
  out += list_items(c.notes);
  return out + "</section>\n";
}

}  // namespace

std::string render_cases_html(const std::vector<record::InputFile>& files, const compare::Comparison* comparison,
                              const HtmlContext& ctx) {
  std::size_t total = 0, ok = 0, failed = 0, waived = 0, checked = 0, wrong_cases = 0;
  for (const auto& f : files) {
    for (const auto& r : f.cases) {
      ++total;
      ok += r.status == "ok";
      failed += r.status == "failed";
      waived += r.status == "waived";
      checked += r.checked;
      wrong_cases += r.checked && r.wrong_total > 0;
    }
  }
  const bool all_good = failed == 0 && wrong_cases == 0;
  std::string body = "<section class=\"summary\"><h2>Summary</h2>\n";
  body += html::cards({{"files", fmt::format("{}", files.size()), ""},
                       {"cases", fmt::format("{}", total), ""},
                       {"ok", fmt::format("{}", ok), ok ? "pass" : ""},
                       {"failed", fmt::format("{}", failed), failed ? "fail" : ""},
                       {"waived", fmt::format("{}", waived), waived ? "waived" : ""},
                       {"verification",
                        checked == 0 ? std::string("not checked")
                                     : fmt::format("{} ({} of {} checked cases wrong)",
                                                   wrong_cases == 0 ? "PASS" : "FAIL", wrong_cases, checked),
                        checked == 0 ? "" : (wrong_cases == 0 ? "pass" : "fail")}});
  body +=
      "<p class=\"note\">check: PASS when every element of the case's result was verified exact, FAIL when any was "
      "wrong, N/A when not checked. % bound = 100 x the model's bound time / measured p50, when the record carries a "
      "model. Sizes follow the nccl-tests convention (docs/measurement.md).</p>\n";
  body += "</section>\n";
  for (const auto& f : files) {
    body += fmt::format("<section class=\"file\"><h2>Results: <code>{}</code></h2>\n", esc(f.path));
    if (f.header) {
      const auto& h = *f.header;
      const std::string sys = system_name(h.system);
      body += fmt::format(
          "<p class=\"muted\">run <code>{}</code>, started {}, collbench {} (git <code>{}</code>), {} rank(s) on {}, "
          "system profile {}</p>\n",
          esc(h.run_id), esc(h.started_at), esc(h.tool_version), esc(h.git_sha), h.hosts.size(),
          esc(hosts_text(h.hosts)), sys.empty() ? "none" : esc(sys));
    }
    for (const auto& w : f.warnings) body += fmt::format("<div class=\"warning\">warning: {}</div>\n", esc(w));
    if (f.cases.empty()) {
      body += "<p class=\"note\">no cases</p></section>\n";
      continue;
    }
    body += html::busbw_charts(f);
    body += html::case_table(f.cases);
    body += "</section>\n";
  }
  if (comparison) body += comparison_section(*comparison);
  body += html::provenance_section(files);
  const std::string subtitle =
      fmt::format("{} case(s) from {} file(s) · {}", total, files.size(),
                  all_good ? html::badge("PASS") + " no failed case, no wrong element"
                           : html::badge("FAIL") + fmt::format(" {} failed case(s), {} case(s) with wrong elements",
                                                               failed, wrong_cases));
  return html::page("collbench report", subtitle, body, ctx);
}

}  // namespace collbench::report
