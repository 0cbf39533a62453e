// Acceptance writers: console table, JSON (schema collbench.accept/1), Markdown, JUnit XML and
// a Prometheus text-format file for node-exporter's textfile collector. They render an
// AcceptReport and compute nothing. Pure C++.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "collbench/accept/judge.hpp"
#include "collbench/report/writer.hpp"

namespace collbench::accept {

// "busbw 3.21 GB/s" (the row's primary metric), "-" when nothing was measured.
std::string measured_text(const Row& row);
// ">= 0.5 x expected = 2.05 GB/s; >= 1 GB/s busbw"
std::string threshold_text(const Row& row);

std::string render_accept_table(const AcceptReport& report);
nlohmann::json accept_to_json(const AcceptReport& report);
std::string render_accept_markdown(const AcceptReport& report);
std::string render_accept_junit(const AcceptReport& report);
// Where a Prometheus file comes from: its labels on every series, so that the files of several
// racks can share one node-exporter textfile directory without a duplicate series.
struct PrometheusSource {
  std::string host;     // the host that wrote the file (rank 0's)
  std::string rack;     // COLLBENCH_RACK; "none" when empty
  std::string run;      // the run id(s) of the acceptance's records
  std::string version;  // collbench's version (on collbench_accept_run_info)
};

// Node-exporter textfile (promtool check metrics clean): metric names start with
// collbench_accept_ and end in a base unit (_seconds, _bytes_per_second, _ratio); one family per
// unit. Every series has the labels host, rack, run and profile; per-check series add check,
// size, domain (all, or the domain index) and ranks; collbench_accept_run_info carries the system
// profile and version (docs/acceptance.md).
std::string render_accept_prometheus(const AcceptReport& report, const PrometheusSource& source = {});

// The verdicts' writers by name (report/writer.hpp), what `accept --format` and `report accept
// --format` accept: table, json, markdown, junit, none. The HTML page and the Prometheus file take
// more than the report (the record files, the run's hosts): --out-dir and --html write them.
const report::WriterRegistry<AcceptReport>& accept_writers();

}  // namespace collbench::accept
