// Acceptance writers: console table, JSON (schema collbench.accept/1), Markdown, JUnit XML and
// a Prometheus text-format file for node-exporter's textfile collector. They render an
// AcceptReport and compute nothing. Pure C++.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "collbench/accept/judge.hpp"

namespace collbench::accept {

// "busbw 3.21 GB/s" (the row's primary metric), "-" when nothing was measured.
std::string measured_text(const Row& row);
// ">= 0.5 x expected = 2.05 GB/s; >= 1 GB/s busbw"
std::string threshold_text(const Row& row);

std::string render_accept_table(const AcceptReport& report);
nlohmann::json accept_to_json(const AcceptReport& report);
std::string render_accept_markdown(const AcceptReport& report);
std::string render_accept_junit(const AcceptReport& report);
// Metric names start with collbench_accept_; every per-check series has the labels profile,
// check, size, domain (all, or the domain index) and ranks.
std::string render_accept_prometheus(const AcceptReport& report);

}  // namespace collbench::accept
