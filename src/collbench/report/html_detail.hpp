// Cell and list helpers shared by the HTML writers' files (not an interface of the layer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collbench::report::html_detail {

std::string esc(std::string_view s);
// The escaped text, or "–" when there is none.
std::string opt_text(const std::optional<std::string>& v);
// A numeric cell with the size in words and the exact bytes as its title.
std::string size_cell(std::uint64_t bytes);
std::string td(std::string_view html_text, std::string_view cls = "");
// A table head: column names, numeric (right-aligned) or not.
std::string th_row(const std::vector<std::pair<std::string, bool>>& cols);
// <ul class="notes"> of escaped items, each after `prefix`; empty for no items.
std::string list_items(const std::vector<std::string>& items, std::string_view prefix = "");

}  // namespace collbench::report::html_detail
