// The git sha the binary was built from ("-dirty" when tracked files differed from HEAD,
// "unknown" outside a git checkout), written at build time by cmake/CollbenchGitSha.cmake.
#pragma once

namespace collbench::build {

const char* git_sha();

}  // namespace collbench::build
