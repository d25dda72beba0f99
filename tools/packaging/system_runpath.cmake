# SPDX-License-Identifier: BSD-2-Clause
# system_runpath.cmake - run by `cmake --install` (and cpack) after the tools are installed: when
# the install's library directory is a system one (CMAKE_INSTALL_PREFIX /usr: the Debian
# packages, a distribution's build), the programs' RUNPATH $ORIGIN/../lib is removed; the loader
# finds librdps there by itself, and Debian policy wants no RUNPATH for it.
# Set by tools/CMakeLists.txt: RDPS_PROGRAMS (paths relative to the prefix), RDPS_LIBDIR (the
# library directory, relative to the prefix or absolute), RDPS_SYSTEM_LIBDIRS.
if(IS_ABSOLUTE "${RDPS_LIBDIR}")
  set(rdps_libdir "${RDPS_LIBDIR}")
else()
  set(rdps_libdir "${CMAKE_INSTALL_PREFIX}/${RDPS_LIBDIR}")
endif()
get_filename_component(rdps_libdir "${rdps_libdir}" ABSOLUTE)
list(FIND RDPS_SYSTEM_LIBDIRS "${rdps_libdir}" rdps_system)
if(rdps_system EQUAL -1)
  return()
endif()
message(STATUS "librdps is in a system library directory (${rdps_libdir}): programs get no RUNPATH")
foreach(program ${RDPS_PROGRAMS})
  if(IS_ABSOLUTE "${program}")
    set(file "$ENV{DESTDIR}${program}")
  else()
    set(file "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${program}")
  endif()
  if(EXISTS "${file}")
    file(RPATH_REMOVE FILE "${file}")
  endif()
endforeach()
