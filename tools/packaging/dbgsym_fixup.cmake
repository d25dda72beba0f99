# SPDX-License-Identifier: BSD-2-Clause
# dbgsym_fixup.cmake - finishes the -dbgsym packages CPack's DEB generator makes (a post-build
# script of cpack.cmake): CPack 3.25 writes their md5sums with the build machine's absolute paths
# and gives them no /usr/share/doc; as dh_strip does, the fixed package lists its files relative
# to the root and its doc directory is a link to the package it holds the symbols of (which it
# depends on at the exact version), so lintian finds nothing wrong with it.
find_program(RDPS_DPKG_DEB dpkg-deb REQUIRED)
find_program(RDPS_MD5SUM md5sum REQUIRED)
# The packages as CPack made them, before it copies them to the output directory.
set(ddebs "")
foreach(package ${CPACK_PACKAGE_FILES})
  if(package MATCHES "-dbgsym_[^/]*[.]ddeb$")
    list(APPEND ddebs "${package}")
  endif()
endforeach()
foreach(ddeb ${ddebs})
  set(dir "${ddeb}.fixup")
  file(REMOVE_RECURSE "${dir}")
  execute_process(COMMAND ${RDPS_DPKG_DEB} -R "${ddeb}" "${dir}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${ddeb} failed")
  endif()
  file(STRINGS "${dir}/DEBIAN/control" pkg REGEX "^Package: ")
  string(REGEX REPLACE "^Package: (.*)-dbgsym$" "\\1" base "${pkg}")
  file(MAKE_DIRECTORY "${dir}/usr/share/doc")
  file(CREATE_LINK "${base}" "${dir}/usr/share/doc/${base}-dbgsym" SYMBOLIC)
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${dir}" "${dir}/usr/*")
  set(sums "")
  foreach(f ${files})
    if(NOT IS_SYMLINK "${dir}/${f}")
      file(MD5 "${dir}/${f}" md5)
      string(APPEND sums "${md5}  ${f}\n")
    endif()
  endforeach()
  file(WRITE "${dir}/DEBIAN/md5sums" "${sums}")
  execute_process(COMMAND ${RDPS_DPKG_DEB} --root-owner-group -b "${dir}" "${ddeb}"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${ddeb} failed")
  endif()
  file(REMOVE_RECURSE "${dir}")
endforeach()
