// Where collbench finds its data (profiles, the plotting package) with or without a source
// tree: an installed or relocated prefix, a build tree, or folders named by the user.
// Pure C++ (reads the environment and /proc/self/exe); docs/install.md describes the order.
#pragma once

#include <string>
#include <vector>

namespace collbench {

// Folders that may hold systems/, workloads/ and acceptance/, in search order (existing or not):
//   1. every entry of $COLLBENCH_PROFILE_PATH (':'-separated)
//   2. $COLLBENCH_PROFILE_DIR (one folder; the older name, still honoured)
//   3. the user's: $XDG_CONFIG_HOME/collbench/profiles (default ~/.config/collbench/profiles)
//   4. the source tree's profiles/, only for a binary running from its build tree
//   5. <the executable's prefix>/share/collbench/profiles (found from /proc/self/exe, so a
//      copied or relocated install works)
//   6. the configured install prefix's share/collbench/profiles
std::vector<std::string> profile_search_dirs();

// Steps 4-6 for any data folder of share/collbench (e.g. "plotting", "profiles").
std::vector<std::string> data_search_dirs(const std::string& name);

// The running executable's path (/proc/self/exe), or empty when unknown.
std::string executable_path();

// True when the running executable lives under this build's binary folder.
bool running_from_build_tree();

}  // namespace collbench
