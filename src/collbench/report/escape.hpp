// Escaping for the text formats the writers render: XML (JUnit) and Markdown tables. Pure.
#pragma once

#include <string>
#include <string_view>

namespace collbench::report {

// & < > " ' as entities; control characters XML 1.0 forbids are dropped (\n and \t kept).
std::string xml_escape(std::string_view s);

// For a Markdown table cell: | escaped, newlines become spaces.
std::string md_escape(std::string_view s);

}  // namespace collbench::report
