// Escaping for the text formats the writers render: XML (JUnit), HTML/SVG pages and Markdown tables. Pure.
#pragma once

#include <string>
#include <string_view>

namespace collbench::report {

// & < > " ' as entities (' as &#39;, valid in XML and every HTML); control characters XML 1.0
// forbids are dropped (\n and \t kept). Every string taken from input goes through it.
std::string xml_escape(std::string_view s);

// For a Markdown table cell: | escaped, newlines become spaces.
std::string md_escape(std::string_view s);

}  // namespace collbench::report
