# SPDX-License-Identifier: BSD-2-Clause
# rdpsConfig.cmake - the installed CMake package of rdps: find_package(rdps CONFIG REQUIRED), then
# target_link_libraries(app PRIVATE rdps::rdps). librdps's own dependencies are linked into it,
# so there is nothing further to find.
include("${CMAKE_CURRENT_LIST_DIR}/rdpsTargets.cmake")
