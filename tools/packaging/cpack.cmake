# SPDX-License-Identifier: BSD-2-Clause
# cpack.cmake - Debian packages of rdps (cpack -G DEB in the build tree), included last by the
# top-level CMakeLists.txt so every install rule is known.
#
#   librdpsN      the shared library (SONAME librdps.so.N, N the major version; only RDPS_EXPORT
#                 symbols, each with a symbol version RDPS_N.M)
#   librdps-dev   rdps/rdps.h, the librdps.so link, rdps.pc, the CMake package (rdps::rdps),
#                 rdps(3), rdps(7) and the examples' sources
#   rdps-tools    rdpub, rdsub, rdps-ping, rdps-info, rdps-stat, rdps-keygen, md-feed, md-book and
#                 their pages
#   python3-rdps  the rdps Python package (pubsub/python: the cffi module and its sources, in
#                 Debian's /usr/lib/python3/dist-packages) and its examples; when it is built
#
# The components are the install rules' (lib, dev: pubsub/; tools: everything under tools/; doc,
# the share/doc/rdps of `cmake --install`, is in no package). Files go under /usr; library
# dependencies come from dpkg-shlibdeps (dpkg-dev). Each package documents itself the Debian way
# in /usr/share/doc/<package>: a machine-readable copyright file (from LICENSE), changelog.gz
# (CHANGELOG.md) and changelog.Debian.gz; those rules are EXCLUDE_FROM_ALL, so only cpack (which
# installs component by component) puts them in. tests/packaging/deb_packages.sh runs lintian on
# the packages and fails on any error.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rdps)
set(CPACK_PACKAGE_VENDOR "rdps")
# The Maintainer of the packages: whoever builds them (maintainer.cmake; docs/building.md, "Debian
# packages"). Empty: DEBEMAIL, else git's identity, else user@host. 1.2's placeholder is dropped.
set(RDPS_PACKAGE_CONTACT "" CACHE STRING
    "Maintainer of the Debian packages (Name <address>); empty: DEBEMAIL, git config, user@host")
if(RDPS_PACKAGE_CONTACT STREQUAL "rdps maintainers <rdps@example.org>")
  set_property(CACHE RDPS_PACKAGE_CONTACT PROPERTY VALUE "")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/maintainer.cmake)
rdps_package_maintainer(rdps_maintainer rdps_maintainer_source rdps_maintainer_error
                        ${PROJECT_SOURCE_DIR})
if(rdps_maintainer_error AND RDPS_PACKAGE_CONTACT)
  message(FATAL_ERROR "RDPS_PACKAGE_CONTACT: ${rdps_maintainer_error}")
elseif(rdps_maintainer_error)
  message(WARNING "Debian packages' Maintainer: ${rdps_maintainer_error}; configure with "
                  "-DRDPS_PACKAGE_CONTACT=\"Name <address>\" (or set DEBEMAIL) before cpack")
else()
  message(STATUS "Debian packages' Maintainer: ${rdps_maintainer} (from ${rdps_maintainer_source})")
endif()
set(CPACK_PACKAGE_CONTACT "${rdps_maintainer}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev tools)
get_property(rdps_python_built GLOBAL PROPERTY RDPS_PYTHON_BUILT)
if(rdps_python_built)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SOURCE rdps)
# Packaged binaries are stripped, their debugging symbols kept as Debian ships them: a -dbgsym
# package beside each package with binaries (librdps1-dbgsym, rdps-tools-dbgsym; .ddeb files
# holding /usr/lib/debug/.build-id/XX/YYYY.debug, which gdb finds by the binaries' build ids).
# CPack's debuginfo step strips what it splits, so CPACK_STRIP_FILES must stay off (it would
# strip first and leave nothing to split). A Release build (no -g) ships symbol tables only.
set(CPACK_STRIP_FILES OFF)
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_POST_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/dbgsym_fixup.cmake)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds librdps.so.N for the tools in the build tree (it is in no installed package).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/pubsub)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# A shlibs file in librdpsN, so packages built against librdps depend on it through
# dpkg-shlibdeps (only the library component has a shared library to describe).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME librdps${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
# The ldconfig trigger Debian wants of a package shipping a public shared library (cpack also
# writes a postinst/postrm calling ldconfig: a lintian warning, maintscript-calls-ldconfig).
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME librdps-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# librdps-dev needs no other -dev package: rdps.h includes none of its dependencies' headers and
# rdps.pc requires no other .pc (librdps is shared only: docs/building.md, "Static linking").
# deb_packages.sh checks the Depends against rdps.pc's requirements.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "pkg-config")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME rdps-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
# The module is a stable-ABI (abi3) extension: any python3; _cffi_backend is python3-cffi-backend.
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-rdps)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3, python3-cffi-backend")
# Byte-compiled at install and cleaned at removal, as dh_python3 does (py3compile, py3clean).
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/python3-rdps/postinst
    ${CMAKE_CURRENT_LIST_DIR}/python3-rdps/prerm)

include(${CMAKE_CURRENT_LIST_DIR}/debian_docs.cmake)

include(CPack)
cpack_add_component(lib DISPLAY_NAME "librdps" DESCRIPTION
  "publish/subscribe over RDMA Unreliable Datagram queue pairs: the shared library")
cpack_add_component(dev DISPLAY_NAME "librdps development files" DEPENDS lib DESCRIPTION
  "header, pkg-config file and man pages of the rdps API")
cpack_add_component(tools DISPLAY_NAME "rdps tools" DEPENDS lib DESCRIPTION
  "rdpub, rdsub, rdps-ping, rdps-info, rdps-keygen and the market-data demo tools")
if(rdps_python_built)
  cpack_add_component(python DISPLAY_NAME "rdps for Python" DEPENDS lib DESCRIPTION
    "the rdps Python 3 package: publishers, subscribers, events, asyncio")
endif()
