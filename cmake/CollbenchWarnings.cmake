# Warning flags live on an interface target so that only collbench's own targets get them
# (third-party headers are included as SYSTEM by their imported targets).
add_library(collbench_warnings INTERFACE)
target_compile_options(collbench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wformat=2>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${COLLBENCH_WERROR}>>:-Werror>
  $<$<AND:$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>,$<BOOL:${COLLBENCH_WERROR}>>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
