// Error types with the exit codes of docs/interfaces.md section 4, and helpers that build the
// "bad value X; accepted: a, b, c (did you mean b?)" messages every input path uses.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class ExitCode : int {
  ok = 0,
  check_failed = 1,  // wrong elements, gate regression, acceptance FAIL
  bad_input = 2,     // bad flags, files, values
  aborted = 3,       // watchdog timeout or aborted run
  incomparable = 4,  // gate: nothing comparable
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Bad user input: exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(ExitCode::bad_input, what) {}
};

// A failure of the system under test or of a library call at run time.
class RuntimeFailure : public Error {
 public:
  explicit RuntimeFailure(const std::string& what) : Error(ExitCode::aborted, what) {}
};

// Edit distance, used to suggest the closest valid name for a typo.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest of `valid` to `bad`, or empty when nothing is close enough to be a typo.
std::string closest_match(std::string_view bad, const std::vector<std::string>& valid);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

// "unknown <what> 'bad'; accepted: a, b, c (did you mean 'b'?)"
std::string unknown_name_message(std::string_view what, std::string_view bad, const std::vector<std::string>& valid);

}  // namespace collbench
