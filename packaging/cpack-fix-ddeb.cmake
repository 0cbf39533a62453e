# CPACK_POST_BUILD_SCRIPTS: repairs the collbench-dbgsym .ddeb that CPack's DEB generator writes
# (CMake 3.25): its md5sums names each file by its absolute staging path instead of a path
# relative to the package root (lintian: md5sums-lists-nonexistent-file), and it has no
# documentation folder (lintian: no-copyright-file, no-changelog). The repaired package lists
# relative paths and links usr/share/doc/collbench-dbgsym to collbench's (it depends on
# collbench of the same version), as Debian's own -dbgsym packages do. The debug sections are
# compressed (objcopy --compress-debug-sections; gdb reads them): 120 MB of DWARF become about a
# fifth, and the package is built with gzip, not xz, which took a minute here. scripts/package-check.
foreach(pkg IN LISTS CPACK_PACKAGE_FILES)
  if(NOT pkg MATCHES "\\.ddeb$")
    continue()
  endif()
  set(root "${pkg}.root")
  file(REMOVE_RECURSE "${root}")
  execute_process(COMMAND dpkg-deb -R "${pkg}" "${root}" COMMAND_ERROR_IS_FATAL ANY)
  file(READ "${root}/DEBIAN/md5sums" sums)
  string(REGEX REPLACE "  /[^\n]*-dbgsym/" "  " sums "${sums}")
  file(GLOB_RECURSE debug_files "${root}/usr/lib/debug/*.debug")
  foreach(debug IN LISTS debug_files)
    execute_process(COMMAND objcopy --compress-debug-sections=zlib "${debug}" COMMAND_ERROR_IS_FATAL ANY)
    file(MD5 "${debug}" md5)
    file(RELATIVE_PATH rel "${root}" "${debug}")
    string(REGEX REPLACE "[0-9a-f]+  ${rel}" "${md5}  ${rel}" sums "${sums}")
  endforeach()
  file(WRITE "${root}/DEBIAN/md5sums" "${sums}")
  file(MAKE_DIRECTORY "${root}/usr/share/doc")
  file(CREATE_LINK collbench "${root}/usr/share/doc/collbench-dbgsym" SYMBOLIC)
  execute_process(COMMAND dpkg-deb --root-owner-group -Zgzip --build "${root}" "${pkg}" OUTPUT_QUIET
                  COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${root}")
endforeach()
