// One operation bound once to its arguments: a function pointer and a fixed block of the
// arguments it reads, called with a single indirect call (no allocation, no virtual call, no
// conversion per call). The timed loop launches through one (run/measure.cpp, Comm::bind_*,
// Collective::bind_launch), so that the arguments are converted once per case instead of once per
// iteration.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>

namespace collbench::backend {

class BoundCall {
 public:
  static constexpr std::size_t kMaxArgBytes = 64;

  // The call Fn(args). Args is a trivially copyable struct of at most kMaxArgBytes, copied into
  // the bound call; whatever it points to must outlive the call.
  template <auto Fn, class Args>
  [[nodiscard]] static BoundCall of(const Args& args) {
    static_assert(std::is_trivially_copyable_v<Args> && std::is_trivially_destructible_v<Args>,
                  "bound arguments are copied bytewise");
    static_assert(sizeof(Args) <= kMaxArgBytes && alignof(Args) <= alignof(std::max_align_t),
                  "bound arguments must fit the fixed block");
    BoundCall call;
    ::new (static_cast<void*>(call.args_)) Args(args);
    call.fn_ = &invoke<Fn, Args>;
    return call;
  }

  void operator()() const { fn_(args_); }

 private:
  BoundCall() = default;

  template <auto Fn, class Args>
  static void invoke(const unsigned char* args) {
    Fn(*std::launder(reinterpret_cast<const Args*>(args)));
  }

  void (*fn_)(const unsigned char*) = nullptr;
  alignas(std::max_align_t) unsigned char args_[kMaxArgBytes] = {};
};

}  // namespace collbench::backend
