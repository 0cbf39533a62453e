// The report layer's writer registries (writer_registries.hpp): each entry renders its result with
// the renderers of this layer, and nothing else.
#include "collbench/report/writer_registries.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "collbench/report/compare_render.hpp"
#include "collbench/report/gate_writers.hpp"
#include "collbench/report/locate_render.hpp"
#include "collbench/report/markdown.hpp"
#include "collbench/report/table.hpp"

namespace collbench::report {
namespace {

std::string nothing() {
  return {};
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(2) + "\n";
}

// One CSV table per output: the comparison when there is one, else every case with its file.
std::string cases_csv(const CasesOutput& o) {
  if (o.comparison != nullptr) return render_comparison_csv(*o.comparison);
  std::string out = "file," + csv_header();
  for (const auto& file : *o.files) {
    for (const auto& r : file.cases) {
      std::string path = file.path;
      if (path.find_first_of(",\"\n") != std::string::npos) path = "\"" + path + "\"";
      out += path + "," + csv_row(r);
    }
  }
  return out;
}

std::string cases_markdown(const CasesOutput& o) {
  std::string out = "# collbench report\n\n" + render_cases_markdown(*o.files);
  if (o.comparison != nullptr) out += render_comparison_markdown(*o.comparison);
  return out;
}

std::string cases_table(const CasesOutput& o) {
  std::string out;
  for (const auto& file : *o.files) {
    out += fmt::format("# file: {}\n", file.path);
    out += file.cases.empty() ? "# (no cases)\n" : render_table(file.cases);
  }
  if (o.comparison != nullptr) out += "#\n" + render_comparison_table(*o.comparison);
  return out;
}

// The table with the validated range under it; JSON with it as a field.
std::string render_model_table_checked(const ModelOutput& o) {
  std::string text = render_model_table(o.collective, o.bytes_convention, *o.system, *o.rows);
  for (const auto& line : o.checked) text += "validated range: " + line + "\n";
  return text;
}

std::string render_model_json_checked(const ModelOutput& o) {
  nlohmann::json j = nlohmann::json::parse(render_model_json(o.collective, *o.system, *o.rows));
  j["checked_range"] = o.checked;
  return json_text(j);
}

}  // namespace

const WriterRegistry<CasesOutput>& cases_writers() {
  static const WriterRegistry<CasesOutput> registry = [] {
    WriterRegistry<CasesOutput> r("report format");
    r.add("table", cases_table);
    r.add("markdown", cases_markdown);
    r.add("csv", cases_csv);
    r.add("html", [](const CasesOutput& o) { return render_cases_html(*o.files, o.comparison, o.html); });
    r.add("none", [](const CasesOutput&) { return nothing(); });
    return r;
  }();
  return registry;
}

const WriterRegistry<gate::GateReport>& gate_writers() {
  static const WriterRegistry<gate::GateReport> registry = [] {
    WriterRegistry<gate::GateReport> r("gate format");
    r.add("table", render_gate_table);
    r.add("json", [](const gate::GateReport& g) { return json_text(gate_to_json(g)); });
    r.add("markdown", render_gate_markdown);
    r.add("junit", render_gate_junit);
    r.add("none", [](const gate::GateReport&) { return nothing(); });
    return r;
  }();
  return registry;
}

const WriterRegistry<locate::LocateReport>& locate_writers() {
  static const WriterRegistry<locate::LocateReport> registry = [] {
    WriterRegistry<locate::LocateReport> r("locate format");
    r.add("text", render_locate_text);
    r.add("json", [](const locate::LocateReport& l) { return json_text(locate_to_json(l)); });
    r.add("none", [](const locate::LocateReport&) { return nothing(); });
    return r;
  }();
  return registry;
}

const WriterRegistry<ModelOutput>& model_writers() {
  static const WriterRegistry<ModelOutput> registry = [] {
    WriterRegistry<ModelOutput> r("model format");
    r.add("table", render_model_table_checked);
    r.add("json", render_model_json_checked);
    r.add("csv", [](const ModelOutput& o) { return render_model_csv(o.collective, *o.system, *o.rows); });
    r.add("none", [](const ModelOutput&) { return nothing(); });
    return r;
  }();
  return registry;
}

const WriterRegistry<MoeModelOutput>& moe_model_writers() {
  static const WriterRegistry<MoeModelOutput> registry = [] {
    WriterRegistry<MoeModelOutput> r("model format");
    r.add("table", [](const MoeModelOutput& o) { return render_moe_model_table(o.collective, *o.system, *o.table); });
    r.add("json", [](const MoeModelOutput& o) { return render_moe_model_json(o.collective, *o.system, *o.table); });
    r.add("csv", [](const MoeModelOutput& o) { return render_moe_model_csv(*o.system, *o.table); });
    r.add("none", [](const MoeModelOutput&) { return nothing(); });
    return r;
  }();
  return registry;
}

}  // namespace collbench::report
