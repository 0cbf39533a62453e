# Per-generator CPack settings (CPACK_PROJECT_CONFIG_FILE, read by cpack for each generator).
# The .deb generator strips the binary itself after moving its debug symbols into the
# collbench-dbgsym .ddeb (CPACK_DEBIAN_DEBUGINFO_PACKAGE); the .tar.gz is stripped at install.
if(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_STRIP_FILES ON)
endif()
