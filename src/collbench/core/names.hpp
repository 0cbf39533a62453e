// The shared vocabulary of docs/interfaces.md section 1 that is not a collective, dtype or
// reduction: backends, algorithms, scopes, timing modes, buffer kinds. One list each, used by
// the CLI, the sweep loader, records and case keys.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class Scope { domain, global };
enum class Timing { isolated, pipelined };

std::string_view to_string(Scope s);
std::string_view to_string(Timing t);
Scope parse_scope(std::string_view name);
Timing parse_timing(std::string_view name);

const std::vector<std::string>& backend_names();    // mpi, nccl
const std::vector<std::string>& algorithm_names();  // auto, ring, tree, ...
const std::vector<std::string>& buffer_kinds();     // host, plain, registered, symmetric

// Validates a name against its list (InputError with suggestions otherwise).
std::string parse_backend(std::string_view name);
std::string parse_algorithm(std::string_view name);
std::string parse_buffer_kind(std::string_view name);

// "a,b , c" -> {"a","b","c"}; empty items are an InputError naming `what`.
std::vector<std::string> split_list(std::string_view text, std::string_view what);

}  // namespace collbench
