// Rank 0's exit code on every rank (agreed_exit.hpp).
#include "cli/agreed_exit.hpp"

#include <exception>
#include <string>

#include "collbench/core/error.hpp"

namespace collbench::cli {

int agreed_code(const run::Control& control, const std::function<int()>& on_root) {
  int code = 0;
  std::string error;
  if (control.rank() == 0) {
    try {
      code = on_root();
    } catch (const Error& e) {
      code = static_cast<int>(e.code());
      error = e.what();
    } catch (const std::exception& e) {
      code = static_cast<int>(ExitCode::aborted);
      error = std::string("internal error: ") + e.what();
    }
  }
  code = control.broadcast_int(code);
  error = control.broadcast_string(error);
  if (!error.empty()) throw Error(static_cast<ExitCode>(code), error);
  return code;
}

}  // namespace collbench::cli
