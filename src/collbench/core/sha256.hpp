// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the digest that names a
// simulated platform file in a run header (docs/simulation.md). Pure C++, no dependencies.
#pragma once

#include <string>
#include <string_view>

namespace collbench {

[[nodiscard]] std::string sha256_hex(std::string_view bytes);

}  // namespace collbench
