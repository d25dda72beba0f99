# SPDX-License-Identifier: BSD-2-Clause
# debian_docs.cmake - /usr/share/doc/<package> of each Debian package (included by cpack.cmake
# once the package names are set): the DEP-5 copyright file made from LICENSE, the upstream
# changelog (CHANGELOG.md, as changelog.gz), changelog.Debian.gz and, in librdps-dev, the
# examples. Written at configure time; LICENSE and CHANGELOG.md are configure dependencies.
set(rdps_deb_docs ${PROJECT_BINARY_DIR}/tools/packaging/doc)
file(MAKE_DIRECTORY ${rdps_deb_docs})
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md)

# copyright (https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/): the holders are
# LICENSE's "Copyright (c) ..." lines, the license text what follows the last of them.
file(READ ${PROJECT_SOURCE_DIR}/LICENSE rdps_license)
string(REGEX MATCHALL "Copyright \\([cC]\\) [^\n]+" rdps_holders "${rdps_license}")
if(NOT rdps_holders)
  message(FATAL_ERROR "LICENSE has no 'Copyright (c) ...' line for the packages' copyright file")
endif()
string(REPLACE "Copyright (c) " "" rdps_holders "${rdps_holders}")
string(REPLACE ";" "\n " rdps_holders "${rdps_holders}")
string(REGEX REPLACE "^.*Copyright \\([cC]\\) [^\n]*\n" "" rdps_license_text "${rdps_license}")
string(STRIP "${rdps_license_text}" rdps_license_text)
# Continuation lines start with a space; an empty line is " .".
string(REPLACE "\n" "\n " rdps_license_text " ${rdps_license_text}")
string(REGEX REPLACE "\n [ ]*\n" "\n .\n" rdps_license_text "${rdps_license_text}")
string(REGEX REPLACE "\n [ ]*\n" "\n .\n" rdps_license_text "${rdps_license_text}")
file(WRITE ${rdps_deb_docs}/copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ${PROJECT_NAME}
Upstream-Contact: ${CPACK_PACKAGE_CONTACT}

Files: *
Copyright: ${rdps_holders}
License: BSD-2-Clause

License: BSD-2-Clause
${rdps_license_text}
")

# changelog.Debian: one entry for the package revision cpack builds. Its date is the configure
# time (or SOURCE_DATE_EPOCH, for reproducible packages).
string(TIMESTAMP rdps_deb_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${rdps_deb_docs}/changelog.Debian
"${CPACK_DEBIAN_PACKAGE_SOURCE} (${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}) unstable; urgency=medium

  * Built by cpack (tools/packaging/cpack.cmake) from rdps ${PROJECT_VERSION}; the
    upstream changes are in changelog.gz.

 -- ${CPACK_PACKAGE_CONTACT}  ${rdps_deb_date}
")

# gzip -9n: maximum compression and no name or time stamp in the header, as Debian policy wants.
find_program(GZIP_EXECUTABLE gzip REQUIRED)
foreach(pair "changelog.Debian.gz=${rdps_deb_docs}/changelog.Debian"
             "changelog.gz=${PROJECT_SOURCE_DIR}/CHANGELOG.md")
  string(REGEX REPLACE "=.*" "" gz "${pair}")
  string(REGEX REPLACE "^[^=]*=" "" in "${pair}")
  execute_process(COMMAND ${GZIP_EXECUTABLE} -9nc ${in} OUTPUT_FILE ${rdps_deb_docs}/${gz}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${in}: ${rc}")
  endif()
endforeach()

get_property(rdps_python_built GLOBAL PROPERTY RDPS_PYTHON_BUILT)
set(rdps_doc_components lib dev tools)
if(rdps_python_built)
  list(APPEND rdps_doc_components python)
endif()
foreach(component ${rdps_doc_components})
  string(TOUPPER ${component} c)
  set(dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${c}_PACKAGE_NAME})
  install(FILES ${rdps_deb_docs}/copyright ${rdps_deb_docs}/changelog.gz
                ${rdps_deb_docs}/changelog.Debian.gz
          DESTINATION ${dir} COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()

# The examples (tools/examples: every source and the CMakeLists.txt that builds them).
get_property(rdps_example_files GLOBAL PROPERTY RDPS_EXAMPLE_FILES)
if(rdps_example_files)
  install(FILES ${rdps_example_files}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_DEV_PACKAGE_NAME}/examples
          COMPONENT dev EXCLUDE_FROM_ALL)
endif()
get_property(rdps_python_examples GLOBAL PROPERTY RDPS_PYTHON_EXAMPLES)
if(rdps_python_built AND rdps_python_examples)
  install(FILES ${rdps_python_examples}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_PYTHON_PACKAGE_NAME}/examples
          COMPONENT python EXCLUDE_FROM_ALL)
endif()
