// The writer registries of the subcommands whose results the report layer renders (writer.hpp):
// `report FILES` (the case tables and comparisons), `gate`, `locate` and `model` (a collective's
// bounds, and the MoE message-size table). Each registry's names are what the subcommand's
// --format accepts. accept's verdicts are registered in accept/writers.hpp, step's in
// src/cli/step_output.hpp, run and sweep's streaming writers in console_writer.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/compare/compare.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/locate/locate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/report/html.hpp"
#include "collbench/report/model_table.hpp"
#include "collbench/report/writer.hpp"

namespace collbench::report {

// `report FILES`: the files (placed and modelled) and the comparison when one was asked for.
struct CasesOutput {
  const std::vector<record::InputFile>* files = nullptr;
  const compare::Comparison* comparison = nullptr;  // none: the cases only
  HtmlContext html;                                 // generator, time and command line of the HTML page
};
// table, markdown, csv, html.
const WriterRegistry<CasesOutput>& cases_writers();

// table, json, markdown, junit.
const WriterRegistry<gate::GateReport>& gate_writers();

// text, json.
const WriterRegistry<locate::LocateReport>& locate_writers();

// `model COLLECTIVE` for a regular collective: its rows on the profile, and how far the model has
// been checked there (one line per rank count; docs/model.md "Validated range").
struct ModelOutput {
  std::string collective;
  std::string bytes_convention;  // the collective's, for the table's size column
  const model::SystemProfile* system = nullptr;
  const std::vector<ModelRow>* rows = nullptr;
  std::vector<std::string> checked;
};
// table, json, csv.
const WriterRegistry<ModelOutput>& model_writers();

// `model moe-*`: the message sizes per EP size, with bounds when a profile was given.
struct MoeModelOutput {
  std::string collective;
  const std::optional<model::SystemProfile>* system = nullptr;
  const MoeModelTable* table = nullptr;
};
// table, json, csv (the same names as model_writers(): one --format for both).
const WriterRegistry<MoeModelOutput>& moe_model_writers();

}  // namespace collbench::report
