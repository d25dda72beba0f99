# SPDX-License-Identifier: BSD-2-Clause
# cpack.cmake - Debian packages of rdps (cpack -G DEB in the build tree), included last by the
# top-level CMakeLists.txt so every install rule is known.
#
#   librdps0      the shared library (SONAME librdps.so.0; only RDPS_EXPORT symbols visible)
#   librdps-dev   rdps/rdps.h, the librdps.so link, rdps.pc, rdps(3) and rdps(7)
#   rdps-tools    rdpub, rdsub, rdps-ping, rdps-info, rdps-stat, md-feed, md-book and their pages
#
# The components are the install rules' (lib, dev: pubsub/; tools: everything under tools/).
# Files go under /usr; library dependencies come from dpkg-shlibdeps (dpkg-dev).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rdps)
set(CPACK_PACKAGE_VENDOR "rdps")
set(CPACK_PACKAGE_CONTACT "rdps maintainers <rdps@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds librdps.so.0 for the tools in the build tree (it is in no installed package).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/pubsub)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# A shlibs file in librdps0, so packages built against librdps depend on it through
# dpkg-shlibdeps (only the library component has a shared library to describe).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME librdps${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME librdps-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# rdps.pc's Requires.private: pkg-config --cflags needs these .pc files too.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libibverbs-dev, librdmacm-dev, libibumad-dev, libprotobuf-c-dev, pkg-config")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME rdps-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)

include(CPack)
cpack_add_component(lib DISPLAY_NAME "librdps" DESCRIPTION
  "publish/subscribe over RDMA Unreliable Datagram queue pairs: the shared library")
cpack_add_component(dev DISPLAY_NAME "librdps development files" DEPENDS lib DESCRIPTION
  "header, pkg-config file and man pages of the rdps API")
cpack_add_component(tools DISPLAY_NAME "rdps tools" DEPENDS lib DESCRIPTION
  "rdpub, rdsub, rdps-ping, rdps-info and the market-data demo tools")
