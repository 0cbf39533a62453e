// `--set KEY=VALUE` on a system profile: any key of the file (dotted, e.g.
// scale_out.in_network_reduction.supported=true), applied to the YAML before it is validated, so
// an override is checked exactly like the file (unknown keys with the closest one, types, units,
// ranges). docs/model.md, "Overriding a profile".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collbench/model/system_profile.hpp"

namespace collbench::model {

// The profile text with every "KEY=VALUE" applied (VALUE is read as YAML: 2, true, 800Gb/s,
// [float32, bfloat16]). InputError naming the override when it is not KEY=VALUE or when KEY
// runs through a value that is not a section.
std::string apply_profile_overrides(std::string_view yaml_text, const std::vector<std::string>& sets);

// load_system_profile, then the overrides, validated as the file is. The result keeps the file's
// name and path; its description ends with the overrides, its digest is the overridden text's.
SystemProfile load_system_profile(const std::string& name_or_path, const std::vector<std::string>& sets);

}  // namespace collbench::model
