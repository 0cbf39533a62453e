// dlopen/dlsym/dlclose behind DynamicLibrary.
#include "collbench/backend/nccl/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <utility>

#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  close();
}

void DynamicLibrary::close() noexcept {
  if (handle_ != nullptr) (void)dlclose(handle_);
  handle_ = nullptr;
}

bool DynamicLibrary::open(const std::vector<std::string>& candidates, std::string& error) {
  close();
  error.clear();
  for (const std::string& name : candidates) {
    void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h == nullptr) {
      const char* why = dlerror();
      error += (error.empty() ? "" : "; ") + std::string(why != nullptr ? why : name + ": cannot be opened");
      continue;
    }
    handle_ = h;
    path_ = name;
    const link_map* map = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
      path_ = map->l_name;
    }
    error.clear();
    return true;
  }
  return false;
}

void* DynamicLibrary::symbol(const char* name) const {
  if (handle_ == nullptr) return nullptr;
  (void)dlerror();
  return dlsym(handle_, name);
}

std::vector<std::string> library_candidates(const char* env_override, const std::string& soname,
                                            const std::string& fallback_dir) {
  if (const char* forced = env_override != nullptr ? std::getenv(env_override) : nullptr;
      forced != nullptr && forced[0] != '\0') {
    return {forced};
  }
  std::vector<std::string> out{soname};
  if (!fallback_dir.empty()) out.push_back(fallback_dir + "/" + soname);
  return out;
}

void throw_load_problem(const std::string& problem) {
  throw InputError(problem);
}

}  // namespace collbench::backend::nccl
